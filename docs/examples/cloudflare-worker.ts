// Cloudflare Workers: the secret is a binding (`wrangler secret put LINKHOOKS_SECRET`) that arrives
// in `env`, so the handler is made on the first request. Without nodejs_compat, verification runs
// on Web Crypto.
import { webhookHandler } from '@linkhooks/receiver/fetch';

interface Env {
  LINKHOOKS_SECRET: string;
}

let handle: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handle ??= webhookHandler({
      secret: env.LINKHOOKS_SECRET,
      on: { click: (event) => console.log('click', event.data.click_id) },
    });
    return handle(request);
  },
};

// Deno (`deno serve`) and Bun (`bun run`): a module whose default export has a `fetch(request)`.
// Cloudflare Workers read the secret from `env` instead: see cloudflare-worker.ts.
import { webhookHandler } from '@linkhooks/receiver/fetch';

export default {
  fetch: webhookHandler({
    secret: process.env.LINKHOOKS_SECRET!,
    on: { click: (event) => console.log('click', event.data.click_id) },
  }),
};

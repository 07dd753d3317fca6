// Cloudflare Workers, Deno (`deno serve`) and Bun (`bun run`): a module whose default export has
// a `fetch(request)`. Where node:crypto is missing, verification runs on Web Crypto.
import { webhookHandler } from '@linkhooks/receiver/fetch';

export default {
  fetch: webhookHandler({
    secret: process.env.LINKHOOKS_SECRET!, // Workers: bind it as a secret and read env.LINKHOOKS_SECRET
    on: { click: (event) => console.log('click', event.data.click_id) },
  }),
};

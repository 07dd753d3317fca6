// pages/api/webhooks/linkhooks.ts
import { webhookApiRoute } from '@linkhooks/receiver/next';

// Next must not parse the body: the signature covers the raw bytes.
export const config = { api: { bodyParser: false } };

export default webhookApiRoute({
  secret: process.env.LINKHOOKS_SECRET!,
  on: {
    click: (event) => console.log('click', event.data.click_id),
    conversion: (event) => console.log('conversion', event.data.conversion_id),
  },
});

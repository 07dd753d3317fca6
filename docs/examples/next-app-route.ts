// app/api/webhooks/linkhooks/route.ts
import { webhookRoute } from '@linkhooks/receiver/next';

export const POST = webhookRoute({
  secret: process.env.LINKHOOKS_SECRET!,
  on: {
    click: (event) => console.log('click', event.data.click_id),
    conversion: (event) => console.log('conversion', event.data.conversion_id),
  },
});

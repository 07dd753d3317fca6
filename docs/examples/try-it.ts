import { buildEvent, signedDelivery } from '@linkhooks/receiver/testing';

/** Sends one signed click, exactly as linkhooks would, to your endpoint under development. */
export async function sendTestClick(url = 'http://localhost:3000/webhooks/linkhooks') {
  const event = buildEvent('click', { data: { country: 'FR' } }); // schema-valid, fresh ids
  const { body, headers } = signedDelivery({ secret: process.env.LINKHOOKS_SECRET!, event });
  const response = await fetch(url, { method: 'POST', headers, body });
  console.log(response.status, await response.text()); // 200 {"received":true}
  return { event, status: response.status };
}

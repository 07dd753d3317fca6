import { sha256, toHex, type WebhookEvent } from '@linkhooks/protocol';

/**
 * The idempotency key of a delivery (design D11): `click:<click_id>`,
 * `conversion:<conversion_id>` (design R15), otherwise `<event>:<sha256 of the raw body>` —
 * every attempt of a delivery sends the same bytes, so the hash is stable across retries.
 *
 * @example
 * await idempotencyKey(event, rawBody); // 'click:clk_01JD8X3K9Q'
 */
export async function idempotencyKey(event: WebhookEvent, rawBody: string | Uint8Array): Promise<string> {
  const data = event.data as { click_id?: unknown; conversion_id?: unknown };
  if (event.event === 'click' && typeof data.click_id === 'string') return `click:${data.click_id}`;
  if (event.event === 'conversion' && typeof data.conversion_id === 'string') {
    return `conversion:${data.conversion_id}`;
  }
  return `${event.event}:${toHex(await sha256(rawBody))}`;
}

/**
 * The key a Standard Webhooks `webhook-id` is claimed under (design D44). Its prefix is no event
 * name, so it never meets a key of {@link idempotencyKey}.
 *
 * @example
 * webhookIdKey('evt_01JD5XKQ6N8M0B3V2C1X9Z7Y4W'); // 'webhook-id:evt_01JD5XKQ6N8M0B3V2C1X9Z7Y4W'
 */
export function webhookIdKey(webhookId: string): string {
  return `webhook-id:${webhookId}`;
}

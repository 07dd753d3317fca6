import { eventSchemas } from '@linkhooks/protocol';
import { constructEvent, EVENT_NAMES } from '@linkhooks/receiver';
import { webhookHandler } from '@linkhooks/receiver/fetch';
import {
  buildEvent,
  generateSecret,
  sampleData,
  signedDelivery,
  signedDeliveryAsync,
  signedRequest,
} from '@linkhooks/receiver/testing';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';

describe('testing kit', () => {
  it.each(EVENT_NAMES)('buildEvent(%s) is schema-valid and verifies through constructEvent', (name) => {
    const event = buildEvent(name);
    expect(eventSchemas[name].safeParse(event).success).toBe(true);
    expect(event.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const secret = generateSecret();
    const { body, headers } = signedDelivery({ secret, event });
    expect(constructEvent(body, headers['x-service-signature'], secret)).toEqual(event);
  });

  it('applies overrides, and refuses overrides that make the event invalid', () => {
    const event = buildEvent('click', {
      timestamp: new Date('2026-01-02T03:04:05.678Z'),
      data: { country: 'FR' },
    });
    expect(event.timestamp).toBe('2026-01-02T03:04:05Z');
    expect(event.data.country).toBe('FR');
    expect(() => buildEvent('click', { data: { link_id: 1.5 } })).toThrow(/data\.link_id/);
    expect(() => buildEvent('click', { timestamp: '2026-01-02' })).toThrow(/timestamp/);
  });

  it('gives fresh identifiers on every call', () => {
    expect(sampleData('click').click_id).not.toBe(sampleData('click').click_id);
    expect(sampleData('conversion').conversion_id).not.toBe(sampleData('conversion').conversion_id);
  });

  it('signs the exact body given, and sets the extension headers', () => {
    const secret = generateSecret();
    const { headers } = signedDelivery({ secret, body: '{"a":1}', deliveryId: 'dlv_9', attempt: 4 });
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-delivery-id': 'dlv_9',
      'x-service-attempt': '4',
    });
    expect(headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(() => signedDelivery({ secret })).toThrow(/event.*body/);
  });

  it('builds a signed Web Request that the fetch adapter accepts', async () => {
    const secret = generateSecret();
    const seen: string[] = [];
    const handle = webhookHandler({
      secret,
      on: { conversion: (e) => void seen.push(e.data.conversion_id) },
    });
    const event = buildEvent('conversion');
    const response = await handle(await signedRequest('https://receiver.test/webhooks', { secret, event }));
    expect(response.status).toBe(200);
    expect(seen).toEqual([event.data.conversion_id]);
  });

  it('signs Standard Webhooks deliveries that the reference libraries verify, beside X-Service-Signature', async () => {
    const secret = generateSecret();
    const event = buildEvent('click');
    const at = new Date();
    const input = { secret, event, scheme: 'standard-webhooks', eventId: 'evt_7', timestamp: at } as const;
    const { body, headers } = signedDelivery(input);
    expect(headers).toMatchObject({
      'webhook-id': 'evt_7',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'x-service-signature': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(event);
    expect(await signedDeliveryAsync(input)).toEqual({
      body,
      headers: { ...headers, 'x-service-delivery-id': expect.any(String) },
    });
    expect(constructEvent(body, headers, secret, { scheme: 'standard-webhooks' })).toEqual(event);

    const svix = signedDelivery({ ...input, headerNames: 'svix', webhookId: 'msg_1' });
    expect(Object.keys(svix.headers).filter((h) => h.startsWith('webhook-'))).toEqual([]);
    expect(new SvixWebhook(secret).verify(svix.body, svix.headers)).toEqual(event);
  });

  it('says a misspelt event name, and a timestamp in milliseconds, plainly', () => {
    expect(() => buildEvent('clicks' as never)).toThrow(
      /^no event is named "clicks"\. Events: click, conversion, /,
    );
    expect(() => sampleData('clicks' as never)).toThrow(/^no event is named "clicks"/);
    const input = {
      secret: generateSecret(),
      event: buildEvent('click'),
      scheme: 'standard-webhooks',
    } as const;
    expect(() => signedDelivery({ ...input, timestamp: Date.now() })).toThrow(/looks like milliseconds/);
    const seconds = Math.floor(Date.now() / 1000);
    expect(signedDelivery({ ...input, timestamp: seconds }).headers['webhook-timestamp']).toBe(
      String(seconds),
    );
  });

  it('makes a retry of the same delivery with the first one’s event id, a replay of its webhook-id', async () => {
    const secret = generateSecret();
    const event = buildEvent('click');
    const handle = webhookHandler({
      secret,
      scheme: 'standard-webhooks',
      idempotency: { store: (await import('@linkhooks/receiver')).createMemoryStore() },
      on: { click: () => {} },
    });
    const send = async (delivery: ReturnType<typeof signedDelivery>) =>
      (await handle(new Request('https://receiver.test/', { method: 'POST', ...delivery }))).json();
    const first = signedDelivery({ secret, event, scheme: 'standard-webhooks' });
    const eventId = first.headers['x-service-event-id'];
    expect(await send(first)).toEqual({ received: true });
    const retry = signedDelivery({ secret, event, scheme: 'standard-webhooks', eventId, attempt: 2 });
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(await send(retry)).toEqual({ received: true, duplicate: true, code: 'replayed_webhook_id' });
  });

  it('marks test deliveries, and refuses Standard Webhooks fields without the scheme', () => {
    const secret = generateSecret();
    expect(signedDelivery({ secret, body: '{}', test: true }).headers['x-service-test']).toBe('1');
    expect(signedDelivery({ secret, body: '{}' }).headers['x-service-test']).toBeUndefined();
    expect(() => signedDelivery({ secret, body: '{}', webhookId: 'evt_1' })).toThrow(/standard-webhooks/);
  });
});

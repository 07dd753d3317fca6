import { readFileSync } from 'node:fs';
import { signStandardWebhook } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { constructEvent, constructEventAsync } from './construct-event.js';
import { isWebhookError } from './errors.js';
import { createDeliveryHandler } from './handler/handle-delivery.js';
import { createMemoryStore } from './idempotency/memory-store.js';
import { headerGetter } from './scheme.js';

const vector = JSON.parse(
  readFileSync(new URL('../../protocol/vectors/known-answers.json', import.meta.url), 'utf8'),
) as {
  secret: string;
  webhook_id: string;
  webhook_timestamp: number;
  body: string;
  webhook_signature: string;
};
const secret = vector.secret;
const body = JSON.stringify({
  event: 'link.deleted',
  timestamp: '2026-11-24T08:00:00Z',
  data: { link_id: 7, slug: 'summer' },
});
const NOW = 1_795_507_200;
const clock = { now: () => NOW * 1000 };
const standard = { scheme: 'standard-webhooks', clock } as const;

function signed(
  overrides: { id?: string; timestamp?: number; secret?: string | string[]; body?: string } = {},
) {
  const id = overrides.id ?? 'evt_1';
  const timestamp = overrides.timestamp ?? NOW;
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook({
      id,
      timestamp,
      body: overrides.body ?? body,
      secret: overrides.secret ?? secret,
    }),
  };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isWebhookError(error) ? error.code : `not a WebhookError: ${String(error)}`;
  }
  return undefined;
}

describe('constructEvent with scheme "standard-webhooks"', () => {
  it('matches the known-answer vector', () => {
    // The vector's body is a signature fixture, not an envelope: verification passes, the schema does not.
    const headers = {
      'webhook-id': vector.webhook_id,
      'webhook-timestamp': String(vector.webhook_timestamp),
      'webhook-signature': vector.webhook_signature,
    };
    const at = {
      scheme: 'standard-webhooks',
      clock: { now: () => vector.webhook_timestamp * 1000 },
    } as const;
    expect(codeOf(() => constructEvent(vector.body, headers, secret, at))).toBe('invalid_payload');
    const forged = { ...headers, 'webhook-id': 'evt_other' };
    expect(codeOf(() => constructEvent(vector.body, forged, secret, at))).toBe('invalid_signature');
  });

  it('reads Web Headers, Node header objects and plain objects in any case', async () => {
    const headers = signed();
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    for (const source of [headers, new Headers(headers), upper]) {
      expect(constructEvent(body, source, secret, standard).event).toBe('link.deleted');
      expect((await constructEventAsync(body, source, secret, standard)).event).toBe('link.deleted');
    }
  });

  it('refuses each missing header with its own code, and never falls back to X-Service-Signature', () => {
    const headers = signed();
    const without = (name: string) => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
    expect(codeOf(() => constructEvent(body, without('webhook-id'), secret, standard))).toBe(
      'missing_webhook_id',
    );
    expect(codeOf(() => constructEvent(body, without('webhook-timestamp'), secret, standard))).toBe(
      'missing_timestamp',
    );
    expect(codeOf(() => constructEvent(body, without('webhook-signature'), secret, standard))).toBe(
      'missing_signature',
    );
    expect(
      codeOf(() => constructEvent(body, { 'x-service-signature': 'a'.repeat(64) }, secret, standard)),
    ).toBe('body_only_signature');
  });

  it('checks the timestamp against the injected clock and toleranceSeconds', () => {
    const old = signed({ timestamp: NOW - 120 });
    expect(constructEvent(body, old, secret, standard).event).toBe('link.deleted');
    expect(codeOf(() => constructEvent(body, old, secret, { ...standard, toleranceSeconds: 119 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    const later = { scheme: 'standard-webhooks', clock: { now: () => (NOW + 301) * 1000 } } as const;
    expect(codeOf(() => constructEvent(body, signed(), secret, later))).toBe('timestamp_out_of_tolerance');
  });

  it('says to pass all the headers when given one header value', () => {
    try {
      constructEvent(body, signed()['webhook-signature'] as never, secret, standard);
      expect.unreachable();
    } catch (error) {
      expect(isWebhookError(error) && error.hint).toMatch(/all the request headers/);
    }
  });

  it('refuses a tolerance without the scheme, and an unknown scheme', () => {
    expect(() => constructEvent(body, 'x', secret, { toleranceSeconds: 60 } as never)).toThrow(
      /standard-webhooks" only/,
    );
    expect(() => constructEvent(body, 'x', secret, { scheme: 'svix' } as never)).toThrow(/scheme/);
    expect(() => createDeliveryHandler({ secret, toleranceSeconds: 60 })).toThrow(/standard-webhooks" only/);
    expect(() =>
      createDeliveryHandler({ secret, scheme: 'standard-webhooks', toleranceSeconds: -1 }),
    ).toThrow(/toleranceSeconds/);
  });
});

describe('headerGetter', () => {
  it('prefers an exact lowercase key and otherwise matches any case', () => {
    const get = headerGetter({ 'Webhook-Id': 'a', 'webhook-timestamp': '1' });
    expect([get('webhook-id'), get('webhook-timestamp'), get('webhook-signature')]).toEqual([
      'a',
      '1',
      undefined,
    ]);
  });
});

describe('the delivery handler with scheme "standard-webhooks"', () => {
  const request = (headers: Record<string, string>, raw = body) => ({
    method: 'POST',
    header: (name: string) => headers[name],
    readBody: async () => raw,
  });

  it('answers 409 to a replay of a webhook-id still in flight, and releases it when the handler fails', async () => {
    let open!: () => void;
    let fail = false;
    const runs: string[] = [];
    const handle = createDeliveryHandler({
      ...standard,
      secret,
      idempotency: { store: createMemoryStore() },
      onError: () => {},
      on: {
        'link.deleted': async (_e, ctx) => {
          runs.push(ctx.webhookId!);
          if (fail) throw new Error('down');
          await new Promise<void>((resolve) => {
            open = resolve;
          });
        },
      },
    });
    const headers = signed({ id: 'evt_slow' });
    const first = handle(request(headers));
    await expect.poll(() => runs.length).toBe(1);
    const second = await handle(request(headers));
    expect(second.status).toBe(409);
    expect(JSON.parse(second.body).error.code).toBe('duplicate_in_flight');
    open();
    expect((await first).status).toBe(200);

    fail = true;
    const other = body.replace('summer', 'winter');
    const failing = signed({ id: 'evt_fails', body: other });
    expect((await handle(request(failing, other))).status).toBe(500);
    expect((await handle(request(failing, other))).status).toBe(500);
    expect(runs).toEqual(['evt_slow', 'evt_fails', 'evt_fails']);
  });
});

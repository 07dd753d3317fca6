/**
 * One battery of delivery cases run against every adapter on a real server, so each framework is
 * held to the same answers (design D10, design R17).
 */
import type { WebhookError, WebhookOptions } from '@linkhooks/receiver';
import { createMemoryStore } from '@linkhooks/receiver';
import { buildEvent, generateSecret, sign, signedDelivery } from '@linkhooks/receiver/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { post } from './servers.js';

export interface RunningAdapter {
  /** Full URL deliveries are POSTed to. */
  url: string;
  stop(): Promise<void>;
}

export type StartAdapter = (options: WebhookOptions) => Promise<RunningAdapter>;

interface Seen {
  name: string;
  event: { event: string; data: Record<string, unknown> };
  ctx: {
    secretIndex: number;
    eventId?: string;
    deliveryId?: string;
    attempt?: number;
    idempotencyKey?: string;
    webhookId?: string;
    test?: boolean;
  };
}

export function adapterBattery(adapterName: string, start: StartAdapter): void {
  describe(`${adapterName} adapter on a real server`, () => {
    const secret = generateSecret();
    const oldSecret = generateSecret();
    const seen: Seen[] = [];
    const errors: WebhookError[] = [];
    let gate: Promise<void> | undefined;
    let server: RunningAdapter;
    let idempotent: RunningAdapter;
    let debugging: RunningAdapter;

    const record = (name: string) => async (event: Seen['event'], ctx: Seen['ctx']) => {
      seen.push({ name, event, ctx });
      if (event.data.click_id === 'clk_throws') throw new Error('database down');
      if (event.data.click_id === 'clk_slow') await gate;
    };
    const on = {
      click: record('click'),
      conversion: record('conversion'),
      unknown: record('unknown'),
    } as WebhookOptions['on'];

    beforeAll(async () => {
      server = await start({
        secret: [secret, oldSecret],
        on,
        onError: (e) => errors.push(e),
        maxBodyBytes: 64 * 1024,
      });
      idempotent = await start({
        secret,
        on,
        idempotency: { store: createMemoryStore() },
        onError: () => {},
      });
      // A secret with a copied newline: the kind of setup a hint describes.
      debugging = await start({ secret: `${secret}\n`, on, onError: () => {}, exposeHints: true });
    });
    afterAll(async () => {
      await server?.stop();
      await idempotent?.stop();
      await debugging?.stop();
    });
    afterEach(() => {
      seen.length = 0;
      errors.length = 0;
    });

    it('verifies a signed click, runs its handler with the delivery context and answers 200', async () => {
      const event = buildEvent('click');
      const { body, headers } = signedDelivery({
        secret,
        event,
        eventId: 'evt_1',
        deliveryId: 'dlv_1',
        attempt: 3,
      });
      const answer = await post(server.url, body, headers);
      expect(answer).toEqual({ status: 200, json: { received: true } });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.event.data.click_id).toBe(event.data.click_id);
      expect(seen[0]!.ctx).toMatchObject({
        secretIndex: 0,
        eventId: 'evt_1',
        deliveryId: 'dlv_1',
        attempt: 3,
      });
    });

    it('sets context.test only for a delivery marked X-Service-Test: 1, and no webhookId in this scheme', async () => {
      for (const test of [false, true]) {
        const { body, headers } = signedDelivery({ secret, event: buildEvent('click'), test });
        expect((await post(server.url, body, headers)).status).toBe(200);
      }
      expect(seen.map((s) => [s.ctx.test, s.ctx.webhookId])).toEqual([
        [false, undefined],
        [true, undefined],
      ]);
    });

    it('verifies the exact bytes of a body that JSON.stringify would not reproduce', async () => {
      const data = buildEvent('conversion').data;
      const body = `{\n  "timestamp" :"2026-11-22T10:00:00Z",\t"data": ${JSON.stringify(data, null, 3)} ,"event":"conversion", "x":1.50}`;
      expect(JSON.stringify(JSON.parse(body))).not.toBe(body);
      const answer = await post(server.url, body, {
        'content-type': 'application/json',
        'x-service-signature': sign(body, secret),
      });
      expect(answer.status).toBe(200);
      expect(seen.map((s) => s.event.data.conversion_id)).toEqual([data.conversion_id]);
    });

    it('accepts an older secret during a rotation and says which one matched', async () => {
      const { body, headers } = signedDelivery({ secret: oldSecret, event: buildEvent('click') });
      expect((await post(server.url, body, headers)).status).toBe(200);
      expect(seen[0]!.ctx.secretIndex).toBe(1);
    });

    it('accepts an uppercase hex signature', async () => {
      const body = JSON.stringify(buildEvent('click'));
      const answer = await post(server.url, body, {
        'x-service-signature': sign(body, secret).toUpperCase(),
      });
      expect(answer.status).toBe(200);
      expect(seen).toHaveLength(1);
    });

    it.each([
      ['a wrong signature', (b: string) => sign(b, generateSecret()), 'invalid_signature'],
      ['no signature', () => undefined, 'missing_signature'],
      ['a sha256= prefix', (b: string) => `sha256=${sign(b, secret)}`, 'malformed_signature'],
      ['63 hex digits', (b: string) => sign(b, secret).slice(1), 'malformed_signature'],
      ['non-hex characters', () => 'z'.repeat(64), 'malformed_signature'],
    ] as const)(
      'answers 401 for %s, saying only "invalid signature", and never runs the handler',
      async (_, signatureOf, code) => {
        const body = JSON.stringify(buildEvent('click'));
        const signature = signatureOf(body);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (signature !== undefined) headers['x-service-signature'] = signature;
        const answer = await post(server.url, body, headers);
        expect(answer.status).toBe(401);
        expect(answer.json).toEqual({ error: { code: 'invalid_signature', message: 'Invalid signature.' } });
        expect(seen).toHaveLength(0);
        // The app's own hook still learns exactly what failed.
        expect(errors.map((e) => e.code)).toEqual([code]);
      },
    );

    it('names the cause of a 401 only when exposeHints is on', async () => {
      const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
      const answer = await post(debugging.url, body, headers);
      expect(answer.status).toBe(401);
      expect(answer.json.error).toMatchObject({
        code: 'invalid_signature',
        hint: expect.stringMatching(/whitespace/),
      });
      const prefixed = await post(debugging.url, body, {
        'x-service-signature': `sha256=${sign(body, secret)}`,
      });
      expect(prefixed.json.error).toMatchObject({
        code: 'malformed_signature',
        hint: expect.stringMatching(/sha256=/),
      });
      expect(seen).toHaveLength(0);
    });

    it('answers 400 invalid_payload, with the failing field, for a verified body that is not an envelope', async () => {
      const event = buildEvent('click');
      const body = JSON.stringify({ ...event, data: { ...event.data, link_id: 'not-a-number' } });
      const answer = await post(server.url, body, { 'x-service-signature': sign(body, secret) });
      expect(answer.status).toBe(400);
      expect(answer.json.error?.code).toBe('invalid_payload');
      expect(answer.json.error?.message).toContain('data.link_id');
      expect(seen).toHaveLength(0);
    });

    it('answers 400 invalid_json for verified bytes that are not JSON or not UTF-8', async () => {
      for (const body of ['{"event":', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
        const answer = await post(server.url, body, { 'x-service-signature': sign(body, secret) });
        expect(answer.status).toBe(400);
        expect(answer.json.error?.code).toBe('invalid_json');
      }
    });

    it('answers an empty POST with 200 as the setup check (design R18) and runs nothing', async () => {
      const answer = await post(server.url, '', {});
      expect(answer).toEqual({ status: 200, json: { received: true } });
      expect(seen).toHaveLength(0);
    });

    it('acknowledges an event name outside the catalogue and hands it to the unknown handler', async () => {
      const body = JSON.stringify({
        event: 'link.archived',
        timestamp: '2026-11-22T10:00:00Z',
        data: { link_id: 1 },
      });
      const answer = await post(server.url, body, { 'x-service-signature': sign(body, secret) });
      expect(answer.status).toBe(200);
      expect(seen.map((s) => s.name)).toEqual(['unknown']);
    });

    it('acknowledges an event that has no handler', async () => {
      const { body, headers } = signedDelivery({ secret, event: buildEvent('link.deleted') });
      expect((await post(server.url, body, headers)).status).toBe(200);
      expect(seen).toHaveLength(0);
    });

    it('answers 500 handler_error when the handler throws, so the service retries, and reports the cause', async () => {
      const { body, headers } = signedDelivery({
        secret,
        event: buildEvent('click', { data: { click_id: 'clk_throws' } }),
      });
      const answer = await post(server.url, body, headers);
      expect(answer.status).toBe(500);
      expect(answer.json.error?.code).toBe('handler_error');
      expect(JSON.stringify(answer.json)).not.toContain('database down');
      expect(errors.map((e) => [e.code, (e.cause as Error).message])).toEqual([
        ['handler_error', 'database down'],
      ]);
    });

    it('answers 413 for a body over maxBodyBytes, and tells onError', async () => {
      const event = buildEvent('click', { data: { city: 'x'.repeat(70 * 1024) } });
      const { body, headers } = signedDelivery({ secret, event });
      const answer = await post(server.url, body, headers);
      expect(answer.status).toBe(413);
      expect(answer.json.error?.code).toBe('payload_too_large');
      expect(seen).toHaveLength(0);
      expect(errors.map((e) => e.code)).toEqual(['payload_too_large']);
    });

    it('answers 405 to other methods', async () => {
      const response = await fetch(server.url, { method: 'GET' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });

    it('runs a click once when it is delivered twice, and answers the duplicate 200', async () => {
      const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
      expect(await post(idempotent.url, body, headers)).toEqual({ status: 200, json: { received: true } });
      expect(await post(idempotent.url, body, headers)).toEqual({
        status: 200,
        json: { received: true, duplicate: true },
      });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.ctx.idempotencyKey).toBe(
        `click:${(JSON.parse(body as string) as Seen['event']).data.click_id}`,
      );
    });

    it('answers 409 to a duplicate that arrives while the first is in flight, then completes the first', async () => {
      let open!: () => void;
      gate = new Promise((resolve) => {
        open = resolve;
      });
      const { body, headers } = signedDelivery({
        secret,
        event: buildEvent('click', { data: { click_id: 'clk_slow' } }),
      });
      const first = post(idempotent.url, body, headers);
      await expect.poll(() => seen.length).toBe(1);
      const second = await post(idempotent.url, body, headers);
      expect(second.status).toBe(409);
      expect(second.json.error?.code).toBe('duplicate_in_flight');
      open();
      expect((await first).status).toBe(200);
      expect((await post(idempotent.url, body, headers)).json.duplicate).toBe(true);
      expect(seen).toHaveLength(1);
    });

    it('releases the key when the handler fails, so the retry runs the handler again', async () => {
      const { body, headers } = signedDelivery({
        secret,
        event: buildEvent('click', { data: { click_id: 'clk_throws' } }),
      });
      expect((await post(idempotent.url, body, headers)).status).toBe(500);
      expect((await post(idempotent.url, body, headers)).status).toBe(500);
      expect(seen).toHaveLength(2);
    });
  });
}

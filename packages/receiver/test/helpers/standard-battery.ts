/**
 * The Standard Webhooks scheme (design D32, design D44) against every adapter on a real server:
 * deliveries signed by the reference `standardwebhooks` library and by `svix` pass; a stale
 * timestamp, a missing header, a body-only delivery and a replayed webhook-id are each refused with
 * their own code; a rotation accepts a header signed by either secret. The clock is injected.
 */
import type { WebhookError, WebhookOptions } from '@linkhooks/receiver';
import { createMemoryStore } from '@linkhooks/receiver';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartAdapter } from './adapter-battery.js';
import { post } from './servers.js';

/** The receiver's fixed "now": 2026-11-24T08:00:00Z. */
const NOW_S = 1_795_507_200;
const at = (seconds: number) => new Date(seconds * 1000);

interface Seen {
  clickId: unknown;
  ctx: { secretIndex: number; webhookId?: string; test: boolean; idempotencyKey?: string };
}

export function standardWebhooksBattery(adapterName: string, start: StartAdapter): void {
  describe(`${adapterName} adapter, scheme "standard-webhooks", on a real server`, () => {
    const secret = generateSecret();
    const oldSecret = generateSecret();
    const seen: Seen[] = [];
    const errors: WebhookError[] = [];
    const clock = { now: () => NOW_S * 1000 };
    let strict: Awaited<ReturnType<StartAdapter>>;
    let rotating: Awaited<ReturnType<StartAdapter>>;
    let debugging: Awaited<ReturnType<StartAdapter>>;

    const on: WebhookOptions['on'] = {
      click: (event, ctx) => void seen.push({ clickId: event.data.click_id, ctx }),
    };

    beforeAll(async () => {
      const base = {
        scheme: 'standard-webhooks',
        clock,
        on,
        onError: (e: WebhookError) => errors.push(e),
      } as const;
      strict = await start({ ...base, secret, idempotency: { store: createMemoryStore() } });
      rotating = await start({ ...base, secret: [oldSecret, secret] });
      debugging = await start({ ...base, secret, exposeHints: true, toleranceSeconds: 60 });
    });
    afterAll(async () => {
      await strict?.stop();
      await rotating?.stop();
      await debugging?.stop();
    });
    afterEach(() => {
      seen.length = 0;
      errors.length = 0;
    });

    /** A click signed by the standardwebhooks library, as any Standard Webhooks sender signs it. */
    function reference(options: { id?: string; seconds?: number; key?: string } = {}) {
      const event = buildEvent('click');
      const body = JSON.stringify(event);
      const id = options.id ?? `msg_${event.data.click_id}`;
      const seconds = options.seconds ?? NOW_S;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(seconds),
        'webhook-signature': new Webhook(options.key ?? secret).sign(id, at(seconds), body),
      };
      return { event, body, id, headers };
    }

    it('accepts a delivery signed by the standardwebhooks library and hands the handler its webhook-id', async () => {
      const { event, body, id, headers } = reference();
      expect(await post(strict.url, body, headers)).toEqual({ status: 200, json: { received: true } });
      expect(seen).toEqual([
        {
          clickId: event.data.click_id,
          ctx: expect.objectContaining({
            secretIndex: 0,
            webhookId: id,
            test: false,
            idempotencyKey: `click:${event.data.click_id}`,
          }),
        },
      ]);
    });

    it('accepts the svix-* header names, signed by the svix library', async () => {
      const event = buildEvent('click');
      const body = JSON.stringify(event);
      const headers = {
        'svix-id': 'msg_svix_1',
        'svix-timestamp': String(NOW_S - 30),
        'svix-signature': new SvixWebhook(secret).sign('msg_svix_1', at(NOW_S - 30), body),
      };
      expect((await post(rotating.url, body, headers)).status).toBe(200);
      expect(seen.map((s) => [s.clickId, s.ctx.webhookId])).toEqual([[event.data.click_id, 'msg_svix_1']]);
    });

    it('accepts a timestamp at the edge of the tolerance, either way', async () => {
      for (const seconds of [NOW_S - 300, NOW_S + 300]) {
        const { body, headers } = reference({ seconds });
        expect((await post(rotating.url, body, headers)).status).toBe(200);
      }
      expect(seen).toHaveLength(2);
    });

    it.each([
      ['a timestamp 301 s old', NOW_S - 301],
      ['a timestamp 301 s ahead', NOW_S + 301],
      ['a day-old capture', NOW_S - 86_400],
    ])('refuses %s with 401 timestamp_out_of_tolerance, never running the handler', async (_, seconds) => {
      const { body, headers } = reference({ seconds });
      const answer = await post(strict.url, body, headers);
      expect(answer).toEqual({
        status: 401,
        json: { error: { code: 'invalid_signature', message: 'Invalid signature.' } },
      });
      expect(errors.map((e) => e.code)).toEqual(['timestamp_out_of_tolerance']);
      expect(seen).toHaveLength(0);
    });

    it.each([
      ['webhook-id', 'missing_webhook_id'],
      ['webhook-timestamp', 'missing_timestamp'],
      ['webhook-signature', 'missing_signature'],
    ])('refuses a delivery without %s with 401 %s', async (header, code) => {
      const { body, headers } = reference();
      delete headers[header];
      expect((await post(strict.url, body, headers)).status).toBe(401);
      expect(errors.map((e) => e.code)).toEqual([code]);
      expect(seen).toHaveLength(0);
    });

    it('refuses a body-only delivery (X-Service-Signature alone) with 401 body_only_signature: no downgrade', async () => {
      const { body, headers } = signedDelivery({ secret, event: buildEvent('click') });
      expect(headers['x-service-signature']).toBeTruthy();
      expect((await post(strict.url, body, headers)).status).toBe(401);
      expect(errors.map((e) => e.code)).toEqual(['body_only_signature']);
      expect(seen).toHaveLength(0);
    });

    it('refuses a valid X-Service-Signature beside a webhook-signature that does not match', async () => {
      const { body, headers } = signedDelivery({
        secret,
        event: buildEvent('click'),
        scheme: 'standard-webhooks',
        timestamp: NOW_S,
      });
      const forged = {
        ...headers,
        'webhook-signature': new Webhook(generateSecret()).sign('x', at(NOW_S), body),
      };
      expect((await post(strict.url, body, forged)).status).toBe(401);
      expect(errors.map((e) => e.code)).toEqual(['invalid_signature']);
    });

    it('answers a replayed webhook-id 200 replayed_webhook_id without running the handler again', async () => {
      const { body, headers } = reference();
      expect((await post(strict.url, body, headers)).json).toEqual({ received: true });
      expect(await post(strict.url, body, headers)).toEqual({
        status: 200,
        json: { received: true, duplicate: true, code: 'replayed_webhook_id' },
      });
      expect(seen).toHaveLength(1);
    });

    it('still de-duplicates by click_id when the same click comes under another webhook-id', async () => {
      const first = signedDelivery({
        secret,
        event: buildEvent('click'),
        scheme: 'standard-webhooks',
        timestamp: NOW_S,
      });
      const again = signedDelivery({
        secret,
        body: first.body,
        scheme: 'standard-webhooks',
        timestamp: NOW_S,
        webhookId: 'evt_another',
      });
      expect((await post(strict.url, first.body, first.headers)).json).toEqual({ received: true });
      expect((await post(strict.url, again.body, again.headers)).json).toEqual({
        received: true,
        duplicate: true,
      });
      expect(seen).toHaveLength(1);
    });

    it('accepts, during a rotation [old, new], a header carrying either signature or both', async () => {
      const event = buildEvent('click');
      const body = JSON.stringify(event);
      const sig = (key: string) => new Webhook(key).sign('msg_rot', at(NOW_S), body);
      const headers = (signature: string) => ({
        'webhook-id': 'msg_rot',
        'webhook-timestamp': String(NOW_S),
        'webhook-signature': signature,
      });
      const both = `${sig(oldSecret)} ${sig(secret)}`;
      expect((await post(rotating.url, body, headers(both))).status).toBe(200);
      expect((await post(rotating.url, body, headers(sig(oldSecret)))).status).toBe(200);
      expect((await post(rotating.url, body, headers(sig(secret)))).status).toBe(200);
      expect(seen.map((s) => s.ctx.secretIndex)).toEqual([0, 0, 1]);
      expect((await post(rotating.url, body, headers(sig(generateSecret())))).status).toBe(401);
      expect(errors.map((e) => e.code)).toEqual(['invalid_signature']);
    });

    it('tells test deliveries apart: X-Service-Test: 1 sets context.test', async () => {
      const { body, headers } = signedDelivery({
        secret,
        event: buildEvent('click'),
        scheme: 'standard-webhooks',
        timestamp: NOW_S,
        test: true,
      });
      expect(headers['x-service-test']).toBe('1');
      expect((await post(strict.url, body, headers)).status).toBe(200);
      expect(seen.map((s) => s.ctx.test)).toEqual([true]);
    });

    it('names the failure, with the skew, only when exposeHints is on; toleranceSeconds narrows the window', async () => {
      const { body, headers } = reference({ seconds: NOW_S - 61 });
      const answer = await post(debugging.url, body, headers);
      expect(answer.status).toBe(401);
      expect(answer.json.error).toMatchObject({
        code: 'timestamp_out_of_tolerance',
        hint: expect.stringMatching(/61 s old, beyond the 60 s tolerance/),
      });
      const bodyOnly = signedDelivery({ secret, event: buildEvent('click') });
      expect((await post(debugging.url, bodyOnly.body, bodyOnly.headers)).json.error).toMatchObject({
        code: 'body_only_signature',
        hint: expect.stringMatching(/turn on Standard Webhooks/),
      });
      expect(seen).toHaveLength(0);
    });
  });
}

/**
 * Operator notifications (design D50) end to end over real HTTPS, in virtual time, on SQLite and
 * PostgreSQL: `endpoint.failing` once per streak at its share of the threshold, `endpoint.disabled`
 * with its reason beside onEndpointDisabled, `endpoint.enabled` on a re-enabling, each signed as
 * deliveries are and retried on their schedule.
 */
import {
  generateSecret,
  readStandardWebhookHeaders,
  sampleEventData,
  verifySignature,
  verifyStandardWebhook,
} from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDeliveryClient,
  type DeliveryClient,
  givenBack,
  longestRequestMs,
} from '../src/delivery/http-client.js';
import { newId } from '../src/domain/ids.js';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { ACCOUNT, makeSender } from './helpers/harness.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { headerRecord, type RawReceiver, startRawReceiver } from './helpers/raw-receiver.js';
import { PG_URL, requireService } from './helpers/services.js';

const SECRET = generateSecret();
const TIMEOUT_MS = 2_000;
let receiver: RawReceiver;
beforeAll(async () => {
  receiver = await startRawReceiver();
});
afterAll(() => receiver.close());

function battery(name: string, open: () => SenderStore) {
  describe(`operator notifications on ${name}`, () => {
    it('warns once per streak, reports the disabling and the re-enabling, signed and retried on schedule', async () => {
      const route = newId('ep').toLowerCase();
      const ops = `${route}-ops`;
      let operatorUp = true;
      const endpointUrl = receiver.route(route, () => ({ status: 500 }));
      const operatorUrl = receiver.route(ops, () => ({ status: operatorUp ? 204 : 503 }));
      const disabled: string[] = [];
      const store = open();
      await store.migrate();
      const { sender, clock } = makeSender(receiver.certs, {
        store,
        retryDelaysMs: [1_000],
        disablePolicy: { threshold: 4 },
        operatorNotifications: { url: operatorUrl, secret: SECRET, failingShare: 0.5 },
        onEndpointDisabled: (e) => void disabled.push(e.id),
      });
      const notices = () =>
        receiver.requests
          .filter((r) => r.route === ops)
          .map((r) => ({ ...r, json: JSON.parse(r.body.toString()) }));
      try {
        const endpoint = await sender.createEndpoint(ACCOUNT, { url: endpointUrl, events: ['click'] });
        for (let i = 0; i < 4; i++)
          await sender.publish(ACCOUNT, { event: 'click', data: sampleEventData('click') });
        await sender.tick(); // four first attempts fail: no delivery has failed yet
        expect(notices()).toEqual([]);
        clock.advance(1_000);
        await sender.tick(); // four deliveries fail in turn: counts 1 to 4
        expect(notices().map((n) => n.json.type)).toEqual(['endpoint.failing', 'endpoint.disabled']);
        const [failing, off] = notices();
        expect(failing!.json).toEqual({
          type: 'endpoint.failing',
          notice_id: failing!.headers['x-service-notice-id'],
          occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          account_id: ACCOUNT,
          endpoint_id: endpoint.id,
          endpoint_origin: receiver.origin,
          consecutive_failures: 2,
          disable_threshold: 4,
        });
        expect(off!.json).toMatchObject({ consecutive_failures: 4, disabled_reason: 'consecutive_failures' });
        expect(off!.body.toString()).not.toContain('/hooks/');
        expect(disabled).toEqual([endpoint.id]);
        for (const n of notices()) {
          expect(verifySignature(n.body, n.headers['x-service-signature'] as string, SECRET).valid).toBe(
            true,
          );
          const standard = readStandardWebhookHeaders((h) => n.headers[h] as string | undefined);
          expect(verifyStandardWebhook(n.body, standard, SECRET, { now: clock.now() }).valid).toBe(true);
          expect(
            verifySignature(n.body, n.headers['x-service-signature'] as string, generateSecret()).valid,
          ).toBe(false);
        }

        // The operator is down when the endpoint is re-enabled: the notice waits for its schedule.
        operatorUp = false;
        await sender.reenableEndpoint(ACCOUNT, endpoint.id);
        await sender.tick();
        expect(notices().map((n) => [n.json.type, n.answer?.status])).toEqual([
          ['endpoint.failing', 204],
          ['endpoint.disabled', 204],
          ['endpoint.enabled', 503],
        ]);
        operatorUp = true;
        clock.advance(999);
        await sender.tick();
        expect(notices()).toHaveLength(3);
        clock.advance(1);
        await sender.tick();
        const [, , first, retried] = notices();
        expect(retried!.answer?.status).toBe(204);
        expect(retried!.headers['x-service-attempt']).toBe('2');
        expect(retried!.body.equals(first!.body)).toBe(true);
        expect(retried!.json).toMatchObject({ type: 'endpoint.enabled', consecutive_failures: 0 });
        // Re-enabling an endpoint that is enabled tells the operator nothing.
        await sender.reenableEndpoint(ACCOUNT, endpoint.id);
        await sender.tick();
        expect(notices()).toHaveLength(4);
        expect(headerRecord(retried!.headers)['user-agent']).toMatch(/^linkhooks\//);
      } finally {
        await sender.stop(0);
        await store.close();
      }
    });
  });
}

battery('sqlite', () => createSqliteStore({ filename: ':memory:' }));

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres', () => {
  const schemas = pgSchemas('lh_notices');
  afterAll(schemas.drop);
  battery('postgres', () =>
    createPostgresStore({ connectionString: PG_URL, schema: schemas.fresh(), poolSize: 4 }),
  );
});

describe('operator notices whose requests could not be sent', () => {
  it('sends a notice given back unsent again, as its first attempt, and its endpoint’s next one after it', async () => {
    const route = newId('ep').toLowerCase();
    const ops = `${route}-ops`;
    const endpointUrl = receiver.route(route, () => ({ status: 500 }));
    const operatorUrl = receiver.route(ops, () => ({ status: 204 }));
    const real = createDeliveryClient({ ca: receiver.certs.ca, allowPrivateNetworks: true });
    // The first notice waits for a connection until its deadline, as behind others (never written).
    let givenBacks = 0;
    const client: DeliveryClient = {
      send: async (request) => {
        if (request.url !== operatorUrl || givenBacks > 0) return real.send(request);
        givenBacks++;
        return { ...givenBack(TIMEOUT_MS), durationMs: TIMEOUT_MS };
      },
      close: () => real.close(),
      destroy: () => real.destroy(),
    };
    const { sender, clock } = makeSender(receiver.certs, {
      client,
      attemptTimeoutMs: TIMEOUT_MS,
      retryDelaysMs: [1_000],
      disablePolicy: { threshold: 2 },
      operatorNotifications: { url: operatorUrl, secret: SECRET, failingShare: 0.5 },
    });
    const notices = () => receiver.requests.filter((r) => r.route === ops);
    try {
      await sender.createEndpoint(ACCOUNT, { url: endpointUrl, events: ['click'] });
      for (let i = 0; i < 2; i++)
        await sender.publish(ACCOUNT, { event: 'click', data: sampleEventData('click') });
      await sender.tick();
      clock.advance(1_000);
      // Two deliveries fail: a warning and the disabling are due, claimed together; the warning
      // is given back, and the disabling waits behind it.
      await sender.tick();
      expect(givenBacks).toBe(1);
      expect(notices()).toEqual([]);
      // Not recorded: no retry is scheduled; it goes once its lease, longer than any request, ends.
      clock.advance(longestRequestMs(TIMEOUT_MS) + 10_000);
      await sender.tick();
      expect(
        notices().map((n) => [n.headers['x-service-attempt'], JSON.parse(n.body.toString()).type]),
      ).toEqual([
        ['1', 'endpoint.failing'],
        ['1', 'endpoint.disabled'],
      ]);
    } finally {
      await sender.stop(0);
      await real.destroy();
    }
  });
});

describe('operator notification settings', () => {
  const store = createSqliteStore({ filename: ':memory:' });
  const bad = (operatorNotifications: { url: string; secret: string; failingShare?: number }) => () =>
    createSender({ store, operatorNotifications });
  it('refuses a URL that is not https, a short secret and a share outside (0, 1)', () => {
    expect(bad({ url: 'http://ops.example.com/in', secret: SECRET })).toThrow(/must use https/);
    expect(bad({ url: 'https://ops.example.com/in', secret: 'short' })).toThrow(/at least 32 characters/);
    for (const failingShare of [0, 1, 1.5, Number.NaN]) {
      expect(bad({ url: 'https://ops.example.com/in', secret: SECRET, failingShare })).toThrow(
        /above 0 and below 1/,
      );
    }
  });
});

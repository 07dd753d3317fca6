import { generateSecret, sign, signStandardWebhook } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { made } from '../../test/helpers/worker-options.js';
import { ManualClock } from '../clock.js';
import { createAbandon } from '../delivery/abandon.js';
import { type DeliveryClient, givenBack, type SendRequest } from '../delivery/http-client.js';
import type { TransitionRules } from '../domain/transition.js';
import type { AttemptResult, DeliveryQueue } from '../store/port.js';
import type { ClaimedDelivery } from '../store/records.js';
import { LARGE_BODY_BYTES, type TurnBudget } from '../turn-budget.js';
import { type AttemptDeps, deliveryHeaders, runAttempt } from './attempt.js';

const secret = generateSecret();
const body = new TextEncoder().encode('{"type":"click.created"}');
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

const claimOf = (test: boolean, standardWebhooks: boolean): ClaimedDelivery => ({
  delivery: {
    id: 'dlv_1',
    eventId: 'evt_1',
    endpointId: 'ep_1',
    accountId: 'acct_1',
    eventName: 'click.created',
    status: 'pending',
    attempts: 2,
    nextAttemptAt: NOW,
    lastFailureKind: null,
    lastStatusCode: null,
    test,
    createdAt: NOW,
    updatedAt: NOW,
  },
  leaseToken: 'token',
  leaseExpiresAt: NOW + 60_000,
  body,
  url: 'https://receiver.example/hooks',
  origin: 'https://receiver.example',
  secret,
  previousSecret: null,
  previousSecretExpiresAt: null,
  standardWebhooks,
});

describe('deliveryHeaders', () => {
  it('writes the signature, then the ids, the attempt and the user agent, in that order', () => {
    const headers = deliveryHeaders(claimOf(false, false), 3, 'linkhooks/1.0', NOW);
    expect(Object.entries(headers)).toEqual([
      ['content-type', 'application/json'],
      ['x-service-signature', sign(body, secret)],
      ['x-service-event-id', 'evt_1'],
      ['x-service-delivery-id', 'dlv_1'],
      ['x-service-attempt', '3'],
      ['user-agent', 'linkhooks/1.0'],
    ]);
  });

  it('adds the Standard Webhooks three after the signature, and marks a test delivery last', () => {
    const headers = deliveryHeaders(claimOf(true, true), 1, 'linkhooks/1.0', NOW);
    const timestamp = Math.floor(NOW / 1000);
    expect(Object.entries(headers)).toEqual([
      ['content-type', 'application/json'],
      ['x-service-signature', sign(body, secret)],
      ['webhook-id', 'evt_1'],
      ['webhook-timestamp', String(timestamp)],
      ['webhook-signature', signStandardWebhook({ id: 'evt_1', timestamp, body, secret: [secret] })],
      ['x-service-event-id', 'evt_1'],
      ['x-service-delivery-id', 'dlv_1'],
      ['x-service-attempt', '1'],
      ['user-agent', 'linkhooks/1.0'],
      ['x-service-test', '1'],
    ]);
  });

  it('gives each attempt an object of its own', () => {
    const claim = claimOf(false, false);
    const first = deliveryHeaders(claim, 1, 'linkhooks/1.0', NOW);
    const second = deliveryHeaders(claim, 2, 'linkhooks/1.0', NOW);
    expect(second).not.toBe(first);
    expect(first['x-service-attempt']).toBe('1');
  });
});

describe('runAttempt', () => {
  /** Deps whose budget holds its steps until `runSteps`, and a client that answers 200 to what it is sent. */
  function harness() {
    const clock = new ManualClock(NOW);
    const sent: SendRequest[] = [];
    const recorded: AttemptResult[] = [];
    const held: (() => void)[] = [];
    const turnBudget: TurnBudget = (step) =>
      new Promise((resolve, reject) => {
        held.push(() => {
          try {
            resolve(step() as never);
          } catch (error) {
            reject(error);
          }
        });
      });
    const client = {
      send: async (request: SendRequest) => {
        sent.push(request);
        return { outcome: { ok: true, statusCode: 200 }, durationMs: 4, responseSnippet: null };
      },
    } as unknown as DeliveryClient;
    const queue = {
      recordAttempt: async (result: AttemptResult) => {
        recorded.push(result);
        return { applied: true, status: 'delivered', nextAttemptAt: null };
      },
    } as unknown as DeliveryQueue;
    const deps: AttemptDeps = {
      queue,
      client,
      clock,
      rules: {} as TransitionRules,
      userAgent: 'linkhooks/1.0',
      turnBudget,
    };
    const runSteps = () => {
      for (const run of held.splice(0)) run();
    };
    return { clock, sent, recorded, deps, held, runSteps };
  }

  it("starts a large body's request in the turn's budget, timed and signed as it starts", async () => {
    const { clock, sent, recorded, deps, held, runSteps } = harness();
    const large = new Uint8Array(LARGE_BODY_BYTES + 1).fill(0x20);
    const claim = { ...claimOf(false, true), body: large };
    const report = runAttempt(deps, claim);
    expect(sent).toHaveLength(0);
    expect(held).toHaveLength(1);
    clock.advance(1_250);
    runSteps();
    const done = await report;
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toBe(large);
    expect(sent[0]!.headers['x-service-signature']).toBe(sign(large, secret));
    expect(sent[0]!.headers['webhook-timestamp']).toBe(String(Math.floor((NOW + 1_250) / 1000)));
    expect(made(done).attempt.startedAt).toBe(NOW + 1_250);
    expect(recorded[0]!.attempt.startedAt).toBe(NOW + 1_250);
  });

  it('starts a request of a body up to the limit at once, past no budget', async () => {
    const { sent, recorded, deps, held } = harness();
    const limit = new Uint8Array(LARGE_BODY_BYTES).fill(0x20);
    const report = runAttempt(deps, { ...claimOf(false, false), body: limit });
    expect(sent).toHaveLength(1);
    expect(held).toHaveLength(0);
    await report;
    expect(recorded[0]!.attempt.startedAt).toBe(NOW);
  });

  it('reports a request given back unsent as no attempt: nothing recorded, its lease given back', async () => {
    const { recorded, deps } = harness();
    const released: string[] = [];
    const client = {
      send: async () => ({ ...givenBack(30_000), durationMs: 30_000 }),
    } as unknown as DeliveryClient;
    const queue = {
      ...deps.queue,
      releaseLease: async (deliveryId: string, token: string) => void released.push(`${deliveryId} ${token}`),
    } as unknown as DeliveryQueue;
    const claim = claimOf(false, false);
    const report = await runAttempt({ ...deps, client, queue }, claim);
    expect(report).toEqual({ claim, unsent: true, heldMs: 30_000 });
    expect(recorded).toEqual([]);
    expect(released).toEqual(['dlv_1 token']);
    // Abandoned by the worker meanwhile, its lease is no longer the worker's to give back.
    const abandon = createAbandon();
    abandon.abort();
    const abandoned = await runAttempt({ ...deps, client, queue }, claim, undefined, abandon.signal);
    expect(abandoned).toEqual({ claim, unsent: true, heldMs: 30_000 });
    expect(released).toEqual(['dlv_1 token']);
  });
});

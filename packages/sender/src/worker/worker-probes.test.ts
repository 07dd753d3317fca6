/**
 * A half-open endpoint's probe (design D27) through the worker: claimed before the rest, its due
 * retry first, counted in its account's share, and sent even when the rest of the claim fails.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { workerOptions } from '../../test/helpers/worker-options.js';
import { ManualClock } from '../clock.js';
import { type DeliveryClient, noAnswerWithin, type SendRequest, timedOut } from '../delivery/http-client.js';
import { ENDPOINT_THRESHOLD, MAX_COOL_DOWN_MS } from '../domain/breaker.js';
import { newId } from '../domain/ids.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { ClaimRequest, ProbeRequest, SenderStore, TurnRequest } from '../store/port.js';
import { ACCOUNTS_TURN_MAX_MS, createWorker } from './worker.js';

const T0 = Date.UTC(2026, 10, 22, 12);
const HANGING = 'https://hanging.example.com/hook';

async function setUp() {
  const memory = createMemoryStore();
  const endpoint = (accountId: string, url: string, events: string[]) =>
    memory.createEndpoint({
      id: newId('ep'),
      accountId,
      url,
      events: events as never,
      secret: 'whsec_test',
      description: null,
      now: T0,
    });
  const hanging = await endpoint('acct_a', HANGING, ['click']);
  const other = await endpoint('acct_a', 'https://other.example.com/hook', ['conversion']);
  const elsewhere = await endpoint('acct_b', 'https://b.example.com/hook', ['click']);
  const publish = (accountId: string, name: string, at: number) =>
    memory.publish(
      { id: newId('evt', at), accountId, name, body: Buffer.from(`{"event":"${name}"}`), createdAt: at },
      () => newId('dlv', at),
    );

  const calls: (['probes', ProbeRequest] | ['due', ClaimRequest] | ['turn', TurnRequest])[] = [];
  let failNextClaim: Error | undefined;
  /** The claim, unless the test made the next one fail. */
  const orFailure = <T>(claim: () => Promise<T>): Promise<T> => {
    const failure = failNextClaim;
    failNextClaim = undefined;
    return failure ? Promise.reject(failure) : claim();
  };
  const store: SenderStore = {
    ...memory,
    claimProbes(request) {
      calls.push(['probes', request]);
      return memory.claimProbes(request);
    },
    claimDue(request) {
      calls.push(['due', request]);
      return orFailure(() => memory.claimDue(request));
    },
    claimTurn(request) {
      calls.push(['turn', request]);
      return orFailure(() => memory.claimTurn(request));
    },
  };
  const sends: { url: string; attempt: string }[] = [];
  /** How many claims had been made when each request was sent. */
  const sentAfter: number[] = [];
  const client: DeliveryClient = {
    async send(request: SendRequest) {
      sends.push({ url: request.url, attempt: request.headers['x-service-attempt']! });
      sentAfter.push(calls.length);
      if (request.url === HANGING) return { ...timedOut(noAnswerWithin(30_000)), durationMs: 30_000 };
      return { outcome: { ok: true, statusCode: 200 }, durationMs: 5, responseSnippet: null };
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  const clock = new ManualClock(T0);
  const errors: unknown[] = [];
  const worker = createWorker(
    workerOptions(8, {
      queue: store,
      client,
      clock,
      perAccountCap: 1,
      onError: (error) => errors.push(error),
    }),
  );
  // Three unanswered attempts, one at a time (the account's share is 1): the breaker opens.
  for (let i = 0; i < ENDPOINT_THRESHOLD; i++) await publish('acct_a', 'click', T0);
  await worker.tick();
  expect(sends.map((s) => s.url)).toEqual(Array(ENDPOINT_THRESHOLD).fill(HANGING));
  sends.length = 0;
  calls.length = 0;
  // Past the cool-down, each retry due: a new delivery of the account's and another account's too.
  clock.advance(MAX_COOL_DOWN_MS);
  await publish('acct_a', 'conversion', clock.now());
  await publish('acct_b', 'click', clock.now());
  const fail = (error = new Error('the database is away')) => {
    failNextClaim = error;
  };
  sentAfter.length = 0;
  return { worker, calls, sends, sentAfter, errors, hanging, other, elsewhere, fail };
}

describe("a half-open endpoint's probe, through the worker", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is claimed first, a retry, and holds its account’s share in the claim that follows', async () => {
    const { worker, calls, sends, hanging } = await setUp();
    await worker.tick();
    const [probes, due] = calls;
    expect(probes).toEqual(['probes', expect.objectContaining({ endpointIds: [hanging.id] })]);
    expect(due![0]).toBe('due');
    const request = due![1] as ClaimRequest;
    expect(request.limit).toBe(7);
    expect(request.shares!.openByAccount.get('acct_a')).toBe(1);
    expect(request.shares!.capped!.endpoints.get(hanging.id)).toBe(0);
    // The probe, attempt 2 of a retry, beside the other account's click; the account's own
    // conversion waits for the probe's slot.
    expect(sends.slice(0, 2)).toEqual([
      { url: HANGING, attempt: '2' },
      { url: 'https://b.example.com/hook', attempt: '1' },
    ]);
    expect(sends.slice(2)).toEqual([{ url: 'https://other.example.com/hook', attempt: '1' }]);
  });

  it('is sent when the rest of the claim fails, the failure reported', async () => {
    const { worker, sends, errors, fail } = await setUp();
    fail();
    await worker.tick();
    expect(sends[0]).toEqual({ url: HANGING, attempt: '2' });
    expect(errors).toEqual([new Error('the database is away')]);
  });

  it('is sent when the turn finds the store out of reach, and no claim in due order waits as long after it', async () => {
    vi.useFakeTimers({ toFake: ['performance'] }); // the next turn due when the test says
    const { worker, calls, sends, sentAfter, errors, fail } = await setUp();
    vi.advanceTimersByTime(ACCOUNTS_TURN_MAX_MS);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    fail(refused);
    await worker.tick();
    // The probe sent after the probes' claim and the turn, no claim between.
    const kinds = calls.map(([kind]) => kind);
    expect(kinds.slice(0, 2)).toEqual(['probes', 'turn']);
    expect(sends[0]).toEqual({ url: HANGING, attempt: '2' });
    expect(sentAfter[0]).toBe(2);
    expect(errors).toEqual([refused]);
  });
});

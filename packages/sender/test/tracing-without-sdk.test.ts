/**
 * Spans while no SDK is registered, and under an SDK that samples them out (design D46): with no
 * SDK the API's spans are no-ops, and the work runs without one made active; a span sampled out
 * still has a context, which is made active so that the work's own spans inherit it.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AlwaysOffSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../src/store/records.js';
import { inSpan, traceAttempt } from '../src/tracing.js';
import type { AttemptReport } from '../src/worker/attempt.js';

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  trace.disable();
  context.disable();
});

const claim = {
  delivery: {
    id: 'dlv_1',
    accountId: 'acct_1',
    endpointId: 'ep_1',
    eventId: 'evt_1',
    eventName: 'click',
    attempts: 0,
  },
  origin: 'https://receiver.example',
} as ClaimedDelivery;
const report = {
  attempt: { statusCode: 200, failureKind: null, durationMs: 3 },
  applied: { applied: true },
  heldMs: 3,
};

/** The span active where it is called: its trace id, and whether it records. */
const active = () => {
  const span = trace.getActiveSpan();
  return span && { traceId: span.spanContext().traceId, recording: span.isRecording() };
};

describe('with no SDK registered', () => {
  it('runs the work with no span made active, and answers what it answers', async () => {
    await expect(inSpan('x', {}, async () => active())).resolves.toBeUndefined();
    const seen: unknown[] = [];
    const answered = await traceAttempt(claim, async () => {
      seen.push(active());
      return report as unknown as AttemptReport;
    });
    expect(answered).toBe(report);
    expect(seen).toEqual([undefined]);
  });

  it('rejects with the work’s error, thrown at once or later', async () => {
    const boom = new Error('boom');
    await expect(
      inSpan('x', {}, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    await expect(inSpan('x', {}, async () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(
      traceAttempt(claim, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    await expect(traceAttempt(claim, async () => Promise.reject(boom))).rejects.toBe(boom);
  });
});

describe('with an SDK that samples every span out', () => {
  it('makes the span active, so the spans started inside share its trace', async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler: new AlwaysOffSampler() }));
    const inIngest = await inSpan('x', {}, async () => active());
    expect(inIngest).toEqual({ traceId: expect.stringMatching(/^[0-9a-f]{32}$/), recording: false });
    expect(inIngest!.traceId).not.toBe('0'.repeat(32));
    // An attempt started under another span is a root all the same: a trace of its own.
    let inAttempt: ReturnType<typeof active>;
    const around = await inSpan('around', {}, async () => {
      await traceAttempt(claim, async () => {
        inAttempt = active();
        return report as unknown as AttemptReport;
      });
      return active();
    });
    expect(inAttempt!).toEqual({ traceId: expect.stringMatching(/^[0-9a-f]{32}$/), recording: false });
    expect(inAttempt!.traceId).not.toBe(around!.traceId);
    expect(around!.traceId).not.toBe('0'.repeat(32));
  });
});

/**
 * @module
 * OpenTelemetry spans for the delivery path (design D46): ingest, publish, claim and each attempt,
 * through `@opentelemetry/api` only. Until the platform registers an SDK the API hands out no-op
 * spans, so none of this costs more than a few calls. Attributes carry ids, counts, the attempt's
 * HTTP status and failure kind, and the endpoint's origin: never a secret, a body, a header, or a
 * URL's path or query string, where receivers keep tokens.
 */
import {
  type Attributes,
  context,
  isSpanContextValid,
  type Link,
  type Span,
  type SpanContext,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { isSenderError } from './errors.js';
import type { Published } from './store/port.js';
import type { ClaimedDelivery } from './store/records.js';
import type { AttemptReport } from './worker/attempt.js';

/** The instrumentation scope every span of the sender is created under. */
export const TRACER_NAME = '@linkhooks/sender';

/** Span names, stable: dashboards and alerts select on them. */
export const SPAN = {
  ingest: 'linkhooks.ingest',
  publish: 'linkhooks.publish',
  claim: 'linkhooks.claim',
  attempt: 'linkhooks.attempt',
} as const;

const tracer = trace.getTracer(TRACER_NAME);

/**
 * The span the API hands out while no SDK is registered: not recording and with no valid context,
 * so nothing reads it and nothing can be its child. Work under such a span runs without making it
 * active and without an async frame to end it: per attempt, those were 4% of a SQLite service's
 * event-loop time in a delivery burst (bench/service-ab.mjs). An SDK's span is recording, or
 * sampled out with a valid context that its children still inherit; one it hands out while
 * tracing is suppressed has no valid context either, and the spans it would parent are
 * suppressed all the same.
 */
const isNoop = (span: Span) => !span.isRecording() && !isSpanContextValid(span.spanContext());

/**
 * `work` under a no-op span (isNoop): run as it is, a throw answered as a rejection, as the traced
 * path answers it. Callers check isNoop first, so the no-op path allocates no traced closure.
 */
function untraced<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return work(span);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `fn` run with `span` as the active span, as `startActiveSpan` runs it. */
const withActive = <T>(span: Span, fn: () => T): T => context.with(trace.setSpan(context.active(), span), fn);

/**
 * Runs `fn` in a new span made the active one (so spans started inside are its children), ended
 * when `fn` settles. A thrown error sets the span's status with the error's code or name only: an
 * error message may quote input.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  links: Link[] = [],
): Promise<T> {
  const span = tracer.startSpan(name, { attributes, links });
  if (isNoop(span)) return untraced(span, fn);
  return withActive(span, async () => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A new span, the active one's child, left inactive: for work that makes no spans of its own and
 * settles in a promise it can end on, without the async frame `inSpan` keeps meanwhile.
 */
export const startSpan = (name: string, attributes: Attributes): Span =>
  tracer.startSpan(name, { attributes });

/** Ends `span` as failed with `error`'s code or name only (an error message may quote input). */
export function endSpanFailed(span: Span, error: unknown): void {
  failSpan(span, error);
  span.end();
}

function failSpan(span: Span, error: unknown) {
  const code = isSenderError(error) ? error.code : error instanceof Error ? error.name : 'error';
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/**
 * What a publish stored: the event's name (checked, since it was stored), its id (the first one's,
 * for a repeat) and how many deliveries.
 */
export function publishedAttributes(
  span: Span,
  event: string,
  published: Pick<Published, 'eventId' | 'deliveries'> & { duplicate?: boolean },
): void {
  span.setAttribute('linkhooks.event.name', event);
  span.setAttribute('linkhooks.event.id', published.eventId);
  span.setAttribute('linkhooks.publish.deliveries', published.deliveries.length);
  span.setAttribute('linkhooks.publish.duplicate', published.duplicate === true);
}

/** The claim span each claimed delivery came from: its attempt links to it. */
const claimedIn = new WeakMap<ClaimedDelivery, SpanContext>();

/** A claim in a span of its own, with how many were asked for and how many were leased. */
export function traceClaim(limit: number, claim: () => Promise<ClaimedDelivery[]>) {
  return inSpan(SPAN.claim, { 'linkhooks.claim.limit': limit }, async (span) => {
    const claimed = await claim();
    span.setAttribute('linkhooks.claim.claimed', claimed.length);
    if (span.isRecording()) for (const c of claimed) claimedIn.set(c, span.spanContext());
    return claimed;
  });
}

/**
 * One attempt in a span of its own: a root span (the worker, not a request, started it), linked
 * to the claim that leased the delivery.
 */
export function traceAttempt(claim: ClaimedDelivery, attempt: () => Promise<AttemptReport>) {
  const { delivery } = claim;
  const from = claimedIn.get(claim);
  const attributes: Attributes = {
    'linkhooks.account.id': delivery.accountId,
    'linkhooks.delivery.id': delivery.id,
    'linkhooks.endpoint.id': delivery.endpointId,
    'linkhooks.endpoint.origin': claim.origin,
    'linkhooks.event.id': delivery.eventId,
    'linkhooks.event.name': delivery.eventName,
    'linkhooks.attempt.number': delivery.attempts + 1,
  };
  const span = tracer.startSpan(SPAN.attempt, {
    attributes,
    root: true,
    links: from ? [{ context: from }] : [],
  });
  if (isNoop(span)) return untraced(span, attempt);
  return withActive(span, async () => {
    try {
      const report = await attempt();
      span.setAttribute('linkhooks.attempt.duration_ms', report.heldMs);
      if (report.unsent) {
        // Given back unsent, it is no attempt and no failure of its receiver.
        span.setAttribute('linkhooks.attempt.unsent', true);
        span.setAttribute('linkhooks.attempt.recorded', false);
        return report;
      }
      const { statusCode, failureKind } = report.attempt;
      if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
      span.setAttribute('linkhooks.attempt.recorded', report.applied.applied);
      if (report.applied.status) span.setAttribute('linkhooks.delivery.status', report.applied.status);
      if (failureKind !== null) {
        span.setAttribute('linkhooks.attempt.failure_kind', failureKind);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failureKind });
      }
      return report;
    } catch (error) {
      span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

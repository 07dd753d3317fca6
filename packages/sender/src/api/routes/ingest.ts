/** Platform ingest: one event, or a batch of up to MAX_BATCH in one request. */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Attributes } from '@opentelemetry/api';
import { z } from 'zod';
import { MAX_EVENT_BODY_BYTES } from '../../engine/event-input.js';
import { PUBLISH_SLICE } from '../../engine/publish-many.js';
import type { PublishItem, PublishManyResult, PublishResult, Sender } from '../../engine/sender.js';
import { isSenderError } from '../../errors.js';
import { inSpan, SPAN } from '../../tracing.js';
import { atOnce, budgetFor } from '../../turn-budget.js';
import { type ErrorResponse, errorResponse } from '../error-response.js';
import type { Ingest } from '../ingest.js';
import { defineRoute, type RouteSpec } from '../route.js';
import {
  batchResultSchema,
  errorSchema,
  type IngestBody,
  ingestBodySchema,
  publishResultSchema,
} from '../schemas.js';
import { publishResultJson } from '../serialize.js';

export const MAX_BATCH = 1_000;
/** A batch's body: 1,000 events of a few KiB each fit with room to spare. */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;

const err = (description: string) => ({ description, schema: errorSchema });

/** Room in a single ingest request for what is not the event's body: its account_id, event_id, spacing. */
const REQUEST_OWN_BYTES = 4 * 1024;

const ingestOne = defineRoute<IngestBody>({
  method: 'post',
  path: '/internal/v1/events',
  summary: 'Platform ingest: publish an event for an account (the same as publish())',
  tag: 'Platform',
  auth: 'service',
  // The request's own fields (account_id, event_id) and its spacing come on top of the event's
  // body, whose limit buildEvent holds (MAX_EVENT_BODY_BYTES): the route reads a little more.
  body: {
    ...ingestBodySchema,
    required: true,
    ingest: true,
    limitBytes: MAX_EVENT_BODY_BYTES + REQUEST_OWN_BYTES,
  },
  responses: {
    200: {
      description: 'The event_id was ingested before: nothing stored; the first event and its deliveries',
      schema: publishResultSchema,
    },
    202: { description: 'Stored, with one delivery per subscribed endpoint', schema: publishResultSchema },
    400: err('The event is invalid'),
    401: err('Missing or wrong service token'),
    403: err('The account’s plan has no webhooks'),
    404: err('No such account'),
    413: err(`The payload delivered for this event would be over ${MAX_EVENT_BODY_BYTES / 1024} KiB`),
    429: err('The account is over its events per second; Retry-After says when to send again'),
  },
  async handle({ sender, ingest, body }) {
    const item = await ingest.item(body);
    const result = await sender.publish(item.accountId, item);
    return { status: result.duplicate ? 200 : 202, json: publishResultJson(result) };
  },
});

const batchBody = z
  .strictObject({
    // The count is the route's to refuse, 413 rather than a schema's 400: the document states it.
    events: z
      .array(z.unknown())
      .min(1)
      .meta({ maxItems: MAX_BATCH })
      .describe(`Up to ${MAX_BATCH} ingest bodies, each checked on its own`),
  })
  .meta({ id: 'IngestBatch' });

const ingestBatch = defineRoute<z.infer<typeof batchBody>>({
  method: 'post',
  path: '/internal/v1/events/batch',
  summary: `Platform ingest of up to ${MAX_BATCH} events at once; each item answers on its own`,
  tag: 'Platform',
  auth: 'service',
  body: {
    schema: batchBody,
    required: true,
    limitBytes: MAX_BATCH_BYTES,
    ingest: true,
    arrayMember: { name: 'events', maxItems: MAX_BATCH },
  },
  responses: {
    202: {
      description:
        'Every item’s own result in order: the stored event, or the error that item answers with; `Retry-After` when items were answered to wait (429 or 503), the longest of their waits',
      schema: batchResultSchema,
    },
    400: err('The body is not a list of events'),
    401: err('Missing or wrong service token'),
    413: err(`More than ${MAX_BATCH} events, or a body over ${MAX_BATCH_BYTES / 1024 / 1024} MiB`),
  },
  async handle({ sender, ingest, body }) {
    if (body.events.length > MAX_BATCH) {
      const error = `a batch holds at most ${MAX_BATCH} events; this one has ${body.events.length}`;
      return { status: 413, json: { error: { code: 'payload_too_large', message: error } } };
    }
    let retryAfter = 0;
    const results = (await checkAndPublish(ingest, sender, body.events)).map((o) => {
      if ('result' in o) return { status: o.result.duplicate ? 200 : 202, ...publishResultJson(o.result) };
      retryAfter = Math.max(retryAfter, o.answer.retryAfterSeconds ?? 0);
      return { status: o.answer.status, ...o.answer.body };
    });
    // Items over the account's rate answer 429 in place; the header says when to send them again.
    const headers = retryAfter > 0 ? { 'retry-after': String(retryAfter) } : undefined;
    return { status: 202, json: { results }, ...(headers ? { headers } : {}) };
  },
});

/** The route with its handler in an ingest span: the publishes it makes are the span's children (design D46). */
function inIngestSpan<Body>(route: RouteSpec, attributes: (body: Body) => Attributes): RouteSpec {
  return {
    ...route,
    handle: (ctx) => inSpan(SPAN.ingest, attributes(ctx.body as Body), () => route.handle(ctx)),
  };
}

export const ingestRoute = inIngestSpan<IngestBody>(ingestOne, (body) => ({
  'linkhooks.ingest.events': 1,
  'linkhooks.account.id': body.account_id,
}));
export const ingestBatchRoute = inIngestSpan<z.infer<typeof batchBody>>(ingestBatch, (body) => ({
  'linkhooks.ingest.events': body.events.length,
}));

/** An item's outcome: its publish's result, or the answer it gets instead. */
type Outcome = { result: PublishResult } | { answer: ErrorResponse };

/**
 * Slices of a batch published at once on a store that commits on this process's thread (SQLite):
 * with more, a burst's events wait for their commits in memory, copied by every young-generation
 * collection (design D61). A store a network round trip away takes every slice at once: its round
 * trips, not this process, set the pace.
 */
const IN_PROCESS_SLICES = 2;

/**
 * Each slice of items checked, then its valid items published at once (one of publishMany's
 * slices), the event loop free between slices (a thousand checks in one go would hold every other
 * request). So a slice's parsed events are garbage once published (design D61), while later slices
 * are checked. Each item of the list given is dropped from it as it is read. A check that fails
 * for a reason of its own (not the item's), or a publish that fails, fails the request once the
 * slices already published have settled. A function of its own: the route's handler, waiting for
 * the commits, would hold its last slice.
 */
async function checkAndPublish(ingest: Ingest, sender: Sender, events: unknown[]): Promise<Outcome[]> {
  const slices: Promise<Outcome[]>[] = [];
  const inFlight = sender.capabilities.recordsOverNetwork ? Number.POSITIVE_INFINITY : IN_PROCESS_SLICES;
  // Each slice's checks, then its events, in a turn's budget shared with other requests'
  // (turn-budget.ts), where the store has one.
  const step = budgetFor(sender.capabilities);
  try {
    for (let i = 0; i < events.length; i += PUBLISH_SLICE) {
      // With no budget to space them, each slice after the first waits a turn.
      if (i > 0 && step === atOnce) await nextTurn();
      // The slice `inFlight` before this one settles first; if its publish failed, none is checked.
      if (slices.length >= inFlight) await slices[slices.length - inFlight];
      const slice = events.slice(i, i + PUBLISH_SLICE);
      events.fill(undefined, i, i + PUBLISH_SLICE);
      const checked = await Promise.all(
        await step(() => slice.map((raw) => ingest.parsedItem(raw).then(ok, failed))),
      );
      slice.length = 0;
      const published = step(() => sender.publishMany(takeValid(checked))).then((outcomes) =>
        inOrder(checked, outcomes),
      );
      published.catch(ignore); // awaited below, after the later slices
      slices.push(published);
    }
    return (await Promise.all(slices)).flat();
  } catch (error) {
    await Promise.allSettled(slices);
    throw error;
  }
}

/**
 * An item checked: its publish, until it is taken; or its answer. Not its error: an error's stack
 * holds the checks' frame, and with it their slice of events, until the commit.
 */
type Checked = { ok: true; value: PublishItem | null } | { ok: false; answer: ErrorResponse };
const ok = (value: PublishItem): Checked => ({ ok: true, value });
/** The valid items, taken out of `checked`: it keeps only where each one was. */
function takeValid(checked: Checked[]): PublishItem[] {
  const valid: PublishItem[] = [];
  for (const c of checked) {
    if (!c.ok) continue;
    valid.push(c.value as PublishItem);
    c.value = null;
  }
  return valid;
}
/** An item's own failure; anything else (a broken store) fails the request. */
const failed = (error: unknown): Checked => {
  if (isSenderError(error)) return { ok: false, answer: errorResponse(error) };
  throw error;
};
/** The slice's outcomes in its items' order: the published ones' in turn, the answers in place. */
function inOrder(checked: Checked[], published: PublishManyResult): Outcome[] {
  let next = 0;
  return checked.map((c) => {
    if (!c.ok) return { answer: c.answer };
    const outcome = published[next++]!;
    return outcome.ok ? { result: outcome.result } : { answer: errorResponse(outcome.error) };
  });
}
const ignore = () => undefined;

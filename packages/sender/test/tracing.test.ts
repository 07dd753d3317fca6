/**
 * OpenTelemetry spans (design D46) with the SDK registered as a platform would: an event ingested
 * over HTTP and delivered to a real HTTPS receiver, one endpoint answering 2xx and one 500, gives
 * an ingest span with its publish span as a child, a claim span, and one attempt span per delivery
 * linked to that claim, with ids, the attempt number, the HTTP status and the failure kind; no
 * attribute holds a secret, a body, a key or an endpoint URL's path or query.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import type { SenderStore } from '../src/store/port.js';
import type { ClaimedDelivery } from '../src/store/records.js';
import { SPAN, TRACER_NAME, traceAttempt } from '../src/tracing.js';
import type { AttemptReport } from '../src/worker/attempt.js';
import { type Api, SERVICE_TOKEN, startApi } from './helpers/api-service.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let receiver: HttpsReceiver;
let api: Api;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  receiver = await startHttpsReceiver();
  api = await startApi(receiver.certs, { retryDelaysMs: [] });
});
afterAll(async () => {
  await api.close();
  await receiver.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
});

/** An endpoint whose URL carries a token in its path and its query, as some receivers' do. */
async function endpoint(route: string, behaviour: 'ok' | 'status500') {
  const created = await api.sender.createEndpoint(api.alice.account.id, {
    url: `${receiver.origin}/hooks/${route}?token=query-token-${route}`,
    events: ['click'],
  });
  receiver.route(route, created.secret);
  receiver.behave(route, behaviour);
  return created;
}

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

it('traces ingest, publish, claim and each attempt, with ids and outcomes but no secrets', async () => {
  const good = await endpoint('path-token-good', 'ok');
  const bad = await endpoint('path-token-bad', 'status500');
  exporter.reset();

  const click = { ...sampleEventData('click'), click_id: 'clk_traced_7' };
  const ingested = await api.call('POST', '/internal/v1/events', {
    key: SERVICE_TOKEN,
    body: { account_id: api.alice.account.id, event: 'click', data: click },
  });
  expect(ingested.status).toBe(202);
  const eventId: string = ingested.json.event_id;
  expect(await api.sender.tick()).toBe(2);
  expect(receiver.received.map((r) => r.route)).toEqual(['path-token-good']);

  const spans = exporter.getFinishedSpans();
  expect(spans.every((s) => s.instrumentationScope.name === TRACER_NAME)).toBe(true);
  const [ingest] = byName(spans, SPAN.ingest);
  const [publish] = byName(spans, SPAN.publish);
  expect(byName(spans, SPAN.ingest)).toHaveLength(1);
  expect(byName(spans, SPAN.publish)).toHaveLength(1);
  expect(ingest!.attributes).toEqual({
    'linkhooks.ingest.events': 1,
    'linkhooks.account.id': api.alice.account.id,
  });
  // The publish span is the ingest span's child, in the same trace.
  expect(publish!.parentSpanContext?.spanId).toBe(ingest!.spanContext().spanId);
  expect(publish!.spanContext().traceId).toBe(ingest!.spanContext().traceId);
  expect(publish!.attributes).toEqual({
    'linkhooks.account.id': api.alice.account.id,
    'linkhooks.event.name': 'click',
    'linkhooks.event.id': eventId,
    'linkhooks.publish.deliveries': 2,
    'linkhooks.publish.duplicate': false,
  });

  // tick() claims until nothing is due: the first claim leased both deliveries.
  const claims = byName(spans, SPAN.claim);
  const leasing = claims.filter((c) => c.attributes['linkhooks.claim.claimed'] === 2);
  expect(leasing).toHaveLength(1);
  expect(claims.every((c) => c.parentSpanContext === undefined)).toBe(true);

  const attempts = byName(spans, SPAN.attempt);
  expect(attempts).toHaveLength(2);
  const attemptOf = (endpointId: string) =>
    attempts.find((a) => a.attributes['linkhooks.endpoint.id'] === endpointId)!;
  for (const [ep, status] of [
    [good, 200],
    [bad, 500],
  ] as const) {
    const span = attemptOf(ep.id);
    // A root span of its own, linked to the claim that leased it.
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.links.map((l) => l.context.spanId)).toEqual([leasing[0]!.spanContext().spanId]);
    expect(span.attributes).toMatchObject({
      'linkhooks.account.id': api.alice.account.id,
      'linkhooks.endpoint.id': ep.id,
      'linkhooks.endpoint.origin': receiver.origin,
      'linkhooks.event.id': eventId,
      'linkhooks.event.name': 'click',
      'linkhooks.attempt.number': 1,
      'http.response.status_code': status,
      'linkhooks.attempt.recorded': true,
    });
    expect(span.attributes['linkhooks.delivery.id']).toMatch(/^dlv_/);
    expect(span.attributes['linkhooks.attempt.duration_ms']).toEqual(expect.any(Number));
  }
  expect(attemptOf(good.id).attributes['linkhooks.attempt.failure_kind']).toBeUndefined();
  expect(attemptOf(good.id).attributes['linkhooks.delivery.status']).toBe('delivered');
  expect(attemptOf(good.id).status.code).toBe(SpanStatusCode.UNSET);
  expect(attemptOf(bad.id).attributes['linkhooks.attempt.failure_kind']).toBe('http_status');
  expect(attemptOf(bad.id).attributes['linkhooks.delivery.status']).toBe('failed');
  expect(attemptOf(bad.id).status).toEqual({ code: SpanStatusCode.ERROR, message: 'http_status' });

  // Nothing secret or private in any attribute, event or status of any span.
  const everything = JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status, s.links]));
  const [delivered] = receiver.received;
  for (const secret of [
    good.secret,
    bad.secret,
    'whsec_',
    delivered!.rawBody,
    'clk_traced_7',
    click.ip,
    api.alice.apiKey,
    SERVICE_TOKEN,
    'path-token',
    'query-token',
    '/hooks/',
    'x-service-signature',
  ]) {
    expect(everything).not.toContain(secret);
  }
});

it('marks a refused ingest span with the error code only, and publishes nothing', async () => {
  exporter.reset();
  const refused = await api.call('POST', '/internal/v1/events', {
    key: SERVICE_TOKEN,
    body: { account_id: api.pro.account.id, event: 'click', data: { click_id: 'clk_refused' } },
  });
  expect(refused.status).toBe(403);
  const spans = exporter.getFinishedSpans();
  expect(spans.map((s) => s.name)).toEqual([SPAN.ingest]);
  expect(spans[0]!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'plan_required' });
  expect(spans[0]!.attributes['error.type']).toBe('plan_required');
  expect(JSON.stringify(spans[0]!.events)).not.toContain('clk_refused');
});

it('makes one ingest span for a batch, with a publish span per stored event as its children', async () => {
  exporter.reset();
  const item = (clickId: string) => ({
    account_id: api.alice.account.id,
    event: 'click',
    data: { ...sampleEventData('click'), click_id: clickId },
  });
  const batch = await api.call('POST', '/internal/v1/events/batch', {
    key: SERVICE_TOKEN,
    body: { events: [item('clk_b1'), item('clk_b2'), { event: 'click' }] },
  });
  expect(batch.status).toBe(202);
  expect(batch.json.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 400]);
  const spans = exporter.getFinishedSpans();
  const [ingest] = byName(spans, SPAN.ingest);
  expect(byName(spans, SPAN.ingest)).toHaveLength(1);
  expect(ingest!.attributes).toEqual({ 'linkhooks.ingest.events': 3 });
  const publishes = byName(spans, SPAN.publish);
  expect(publishes).toHaveLength(2);
  for (const p of publishes) expect(p.parentSpanContext?.spanId).toBe(ingest!.spanContext().spanId);
  expect(publishes.map((p) => p.attributes['linkhooks.event.id']).sort()).toEqual(
    batch.json.results
      .slice(0, 2)
      .map((r: { event_id: string }) => r.event_id)
      .sort(),
  );
});

it('ends a publish span refused as invalid as failed, with the code only, and marks a repeat', async () => {
  exporter.reset();
  const accountId = api.alice.account.id;
  await expect(
    api.sender.publish(accountId, { event: 'click', data: { click_id: 'clk_invalid', ip: 42 } } as never),
  ).rejects.toMatchObject({ code: 'invalid_event' });
  const data = { ...sampleEventData('click'), click_id: 'clk_repeat' };
  const first = await api.sender.publish(accountId, { event: 'click', data, eventId: 'evt-trace-repeat' });
  const repeat = await api.sender.publish(accountId, { event: 'click', data, eventId: 'evt-trace-repeat' });
  expect(repeat.eventId).toBe(first.eventId);
  const [refused, stored, repeated] = byName(exporter.getFinishedSpans(), SPAN.publish);
  expect(refused!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'invalid_event' });
  expect(refused!.attributes).toEqual({ 'linkhooks.account.id': accountId, 'error.type': 'invalid_event' });
  expect(JSON.stringify(refused!.events)).not.toContain('clk_invalid');
  expect(stored!.status.code).not.toBe(SpanStatusCode.ERROR);
  expect(stored!.attributes['linkhooks.publish.duplicate']).toBe(false);
  expect(repeated!.attributes).toMatchObject({
    'linkhooks.event.id': first.eventId,
    'linkhooks.publish.duplicate': true,
  });
});

it('answers a store that throws at once as a rejected publish, its span ended failed', async () => {
  const memory = createMemoryStore();
  const broken = () => {
    throw new Error('the store broke');
  };
  const store: SenderStore = { ...memory, publish: broken };
  const sender = createSender({ store });
  exporter.reset();
  for (const eventId of [undefined, 'evt-trace-broken']) {
    const input = { event: 'click' as const, data: sampleEventData('click'), eventId };
    let published: Promise<unknown> | undefined;
    expect(() => {
      published = sender.publish('acct_broken_store', input);
    }).not.toThrow();
    await expect(published).rejects.toThrow('the store broke');
  }
  const spans = byName(exporter.getFinishedSpans(), SPAN.publish);
  expect(spans.map((s) => s.status)).toEqual([
    { code: SpanStatusCode.ERROR, message: 'Error' },
    { code: SpanStatusCode.ERROR, message: 'Error' },
  ]);
  await sender.stop();
  await memory.close();
});

it('marks a request given back unsent as such, not as a failure of its receiver', async () => {
  exporter.reset();
  const claim = {
    delivery: {
      id: 'dlv_unsent',
      accountId: 'acct_unsent',
      endpointId: 'ep_unsent',
      eventId: 'evt_unsent',
      eventName: 'click',
      attempts: 0,
    },
    origin: 'https://relay.example.com',
  } as unknown as ClaimedDelivery;
  const report: AttemptReport = { claim, unsent: true, heldMs: 30_000 };
  await traceAttempt(claim, async () => report);
  const [span] = byName(exporter.getFinishedSpans(), SPAN.attempt);
  expect(span!.attributes).toMatchObject({
    'linkhooks.attempt.unsent': true,
    'linkhooks.attempt.recorded': false,
  });
  expect(span!.attributes['linkhooks.attempt.failure_kind']).toBeUndefined();
  expect(span!.status.code).toBe(SpanStatusCode.UNSET);
});

/**
 * Metrics (prom-client) and structured logs (pino): what an operator sees, and that no secret and
 * no signature ever reaches the logs.
 */
import { readFileSync } from 'node:fs';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { capturedLog } from './helpers/captured-log.js';
import { addEndpoint } from './helpers/endpoints.js';
import { ACCOUNT, makeSender } from './helpers/harness.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(() => receiver.close());

it('counts events published and their commits, attempts and deliveries, times attempts, and reports queue depth and disabled endpoints', async () => {
  const log = capturedLog('debug');
  const { sender } = makeSender(receiver.certs, { logger: log.logger, disablePolicy: { threshold: 1 } });
  const { endpoint: good } = await addEndpoint(sender, receiver, { route: 'obs-ok' });
  const { endpoint: bad } = await addEndpoint(sender, receiver, {
    route: 'obs-bad',
    events: ['conversion'],
    behaviour: 'status500',
  });

  for (let i = 0; i < 3; i++) await sender.publish(ACCOUNT, buildEvent('click'));
  await sender.publish(ACCOUNT, { ...buildEvent('conversion'), eventId: 'evt-obs-once' });
  // A repeat of the key stores nothing: counted apart, though it was read in a commit of its own.
  await sender.publish(ACCOUNT, { ...buildEvent('conversion'), eventId: 'evt-obs-once' });
  await sender.tick();

  const text = await sender.metrics.metrics();
  expect(text).toContain('linkhooks_events_published_total{outcome="stored"} 4');
  expect(text).toContain('linkhooks_events_published_total{outcome="duplicate"} 1');
  // One after another, each in a commit of its own.
  expect(text.split('\n').filter((l) => l.startsWith('linkhooks_publish'))).toEqual([
    'linkhooks_publish_commits_total 5',
  ]);
  expect(text).toContain('linkhooks_attempts_total{outcome="success",kind="none"} 3');
  expect(text).toContain('linkhooks_attempts_total{outcome="failure",kind="http_status"} 1');
  expect(text).toContain('linkhooks_deliveries_total{outcome="delivered"} 3');
  expect(text).toMatch(/linkhooks_attempt_duration_seconds_count\{outcome="success"\} 3/);
  expect(text).toContain('linkhooks_queue_depth{status="pending"} 0');
  expect(text).not.toContain('linkhooks_queue_depth{status="delivered"}'); // counted by deliveries_total
  expect(text).toContain('linkhooks_queue_depth{status="awaiting_retry"} 1');
  expect(text).toContain('linkhooks_disabled_endpoints 0');

  // Each of the sender's own metrics is in the runbook's table (the process's and Node's by prefix).
  const runbook = readFileSync(new URL('../../../docs/platform/runbook.md', import.meta.url), 'utf8');
  const documented = new Set([...runbook.matchAll(/^\| `(linkhooks_[a-z_]+)/gm)].map((m) => m[1]));
  const own = sender.metrics
    .getMetricsAsArray()
    .map((m) => m.name)
    .filter((name) => !/^linkhooks_(process|nodejs)_/.test(name));
  expect(own).toContain('linkhooks_publish_commits_total');
  expect(own.filter((name) => !documented.has(name))).toEqual([]);

  expect(log.lines().filter((l) => l.msg === 'attempt')).toHaveLength(4);
  const signatures = receiver.hits.map((h) => String(h.headers['x-service-signature']));
  for (const secret of [good.secret, bad.secret, ...signatures]) expect(log.text()).not.toContain(secret);
  await sender.stop(0);
});

it("logs what the platform's hooks throw or reject with, and goes on delivering", async () => {
  const log = capturedLog();
  const heard: string[] = [];
  const { sender } = makeSender(receiver.certs, {
    logger: log.logger,
    disableOnGone: true, // the gone endpoint is disabled at its first answer
    onAttempt: (report) => {
      heard.push(report.claim.delivery.id);
      // The first throws, the next returns a promise that rejects.
      if (heard.length === 1) throw new Error('hook broke');
      return Promise.reject(new Error('hook rejected')) as never;
    },
    onEndpointDisabled: () => {
      throw new Error('disable hook broke');
    },
  });
  await addEndpoint(sender, receiver, { route: 'hooks-ok' });
  await addEndpoint(sender, receiver, { route: 'hooks-gone', events: ['conversion'], behaviour: 'gone' });
  await sender.publish(ACCOUNT, buildEvent('click'));
  await sender.publish(ACCOUNT, buildEvent('conversion'));
  expect(await sender.tick()).toBe(2);
  await sender.stop(0);
  await new Promise<void>((resolve) => setImmediate(resolve)); // the rejection's handler runs
  expect(heard).toHaveLength(2);
  const failed = log
    .lines()
    .filter((l) => / hook failed$/.test(l.msg))
    .map((l) => [l.msg, l.err.message]);
  expect(failed.sort()).toEqual([
    ['onAttempt hook failed', 'hook broke'],
    ['onAttempt hook failed', 'hook rejected'],
    ['onEndpointDisabled hook failed', 'disable hook broke'],
  ]);
});

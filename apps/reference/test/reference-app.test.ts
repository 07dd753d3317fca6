/**
 * The reference app end to end: every event type from the ingest route to a verified receipt at the
 * sample receiver over HTTPS; then the receiver's switches — failing, wrong secret — with the retry
 * schedule scaled down to milliseconds, automatic disabling and re-enabling with replay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_NAMES, sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceApp, startReferenceApp } from '../src/reference-app.js';

const TOKEN = 'svc_reference_test_token';
let app: ReferenceApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-reference-'));
  // 10.5 hours × 0.00002 ≈ 0.8 s for the whole schedule.
  app = await startReferenceApp({
    dbFile: join(dir, 'reference.db'),
    timeScale: 0.00002,
    serviceToken: TOKEN,
    onAttempt: attemptRecorded,
  });
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown, key = app.apiKey) {
  const res = await fetch(app.serviceUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

const ingest = (event: string) =>
  api(
    'POST',
    '/internal/v1/events',
    { account_id: app.accountId, event, data: sampleEventData(event as 'click') },
    TOKEN,
  );

// Every state these tests wait for (a receipt, a delivery's status, an endpoint disabled) is
// reached by an attempt, and each recorded attempt is told: a probe runs again after each one.
let attempts = 0;
const waiting = new Set<() => void>();
function attemptRecorded() {
  attempts++;
  for (const wake of waiting) wake();
}

/** Runs `probe` again after each attempt recorded until it returns a value; fails after `timeoutMs`. */
async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = attempts;
    const value = await probe();
    if (value !== undefined) return value;
    if (attempts !== seen) continue; // an attempt was recorded while it probed
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(
        () => {
          waiting.delete(wake);
          reject(new Error(`timed out waiting for ${what}`));
        },
        Math.max(0, deadline - Date.now()),
      );
      waiting.add(wake);
    });
  }
}

const deliveryOf = (id: string) => api('GET', `/v1/deliveries/${id}`).then((r) => r.json);

describe('the reference app', () => {
  it('delivers every event type from the ingest route to a verified receipt over HTTPS', async () => {
    const ids = new Map<string, string>();
    for (const name of EVENT_NAMES) {
      const res = await ingest(name);
      expect(res.status).toBe(202);
      ids.set(name, res.json.deliveries[0].id);
    }
    await eventually(
      async () =>
        EVENT_NAMES.every((n) => app.receiver.received.some((r) => r.event.event === n)) ? true : undefined,
      'every event at the receiver',
    );
    for (const [name, id] of ids) {
      const detail = await eventually(async () => {
        const d = await deliveryOf(id);
        return d.delivery.status === 'delivered' ? d : undefined;
      }, `${name} delivered`);
      expect(detail.attempts[0].status_code).toBe(200);
      expect(JSON.parse(detail.request_body).event).toBe(name);
    }
  });

  it('switched to fail: retries on the (scaled) schedule until the delivery fails', async () => {
    expect((await api('POST', '/reference/receiver', { mode: 'fail' })).status).toBe(200);
    const id = (await ingest('click')).json.deliveries[0].id;
    const failed = await eventually(async () => {
      const d = await deliveryOf(id);
      return d.delivery.status === 'failed' ? d : undefined;
    }, 'the delivery to fail');
    expect(failed.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(failed.attempts.every((a: { status_code: number }) => a.status_code === 500)).toBe(true);
  });

  it('switched to a wrong secret: the receiver answers 401 and the sender retries', async () => {
    await api('POST', '/reference/receiver', { mode: 'wrong-secret' });
    const id = (await ingest('conversion')).json.deliveries[0].id;
    const refused = await eventually(async () => {
      const d = await deliveryOf(id);
      return d.attempts.length >= 2 ? d : undefined;
    }, 'two refused attempts');
    expect(refused.attempts[0].status_code).toBe(401);
    expect(refused.attempts[0].response_snippet).toMatch(/invalid_signature/);
  });

  it('keeps verifying through a rotation of the secret: signed with the previous one until the grace ends', async () => {
    await api('POST', '/reference/receiver', { mode: 'ok' });
    const [endpoint] = (await api('GET', '/v1/endpoints')).json.data;
    const rotated = await api('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.json.previous_secret_expires_at).not.toBeNull();
    /** The status the receiver answered a new click's first attempt with. */
    const firstAnswer = async (when: string) => {
      const id = (await ingest('click')).json.deliveries[0].id;
      const detail = await eventually(async () => {
        const d = await deliveryOf(id);
        return d.attempts.length > 0 ? d : undefined;
      }, `the first attempt ${when}`);
      return detail.attempts[0].status_code;
    };
    expect(await firstAnswer('after the rotation')).toBe(200);
    // The grace ended at once: the new secret signs, and verifies.
    await api('POST', `/v1/endpoints/${endpoint.id}/secret/rotate`, { grace_period_seconds: 0 });
    expect(await firstAnswer('after the grace')).toBe(200);
  });

  it('disables the endpoint after 10 failed deliveries; re-enabling replays what was skipped', async () => {
    await api('POST', '/reference/receiver', { mode: 'fail' });
    for (let i = 0; i < 10; i++) await ingest('click');
    const disabled = await eventually(async () => {
      const e = (await api('GET', `/v1/endpoints/${app.endpoint.id}`)).json;
      return e.enabled ? undefined : e;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ disabled_reason: 'consecutive_failures' });
    const skipped = (await ingest('link.created')).json.deliveries[0];
    expect(skipped.status).toBe('skipped');

    await api('POST', '/reference/receiver', { mode: 'ok' });
    const before = app.receiver.received.length;
    const enabled = await api('POST', `/v1/endpoints/${app.endpoint.id}/enable`, { replay_skipped: true });
    expect(enabled.json.endpoint.enabled).toBe(true);
    expect(enabled.json.replayed).toBeGreaterThanOrEqual(1);
    await eventually(
      async () =>
        app.receiver.received.slice(before).some((r) => r.event.event === 'link.created') ? true : undefined,
      'the skipped event to be replayed',
    );
  });

  it('answers a body that is not JSON with a JSON 400, not a page with a stack', async () => {
    const res = await fetch(`${app.serviceUrl}/reference/receiver`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"mode": secret_value}',
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(/^the request body is not valid JSON: /);
    expect(body.error.message).not.toMatch(/node_modules|\n\s+at |secret_value/);
    const large = await fetch(`${app.serviceUrl}/reference/receiver`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'ok', pad: 'x'.repeat(200_000) }),
    });
    expect(large.status).toBe(413);
    expect((await large.json()).error.code).toBe('payload_too_large');
  });

  it('refuses an unknown receiver mode', async () => {
    const res = await api('POST', '/reference/receiver', { mode: 'explode' });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/ok, fail, hang, wrong-secret/);
  });
});

/**
 * A store whose disk sync failed (design D33) answers ingest 503 `storage_failed`, on the single
 * route and in each batch item's place; the sender logs the failure once and `/healthz` answers 503
 * from then on: the caller learns that nothing was acknowledged, and a supervisor restarts the
 * service. The service runs on a real SQLite store whose WAL sync fails as a disk's I/O error
 * fails it (`fdatasync` answering EIO, from the moment `failSyncs` is called).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { capturedLog } from '../helpers/captured-log.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const disk = vi.hoisted(() => ({ failing: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (error: unknown) => void) => {
      if (!disk.failing) return fs.fdatasync(fd, done);
      done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    },
  };
});

const SYNC_FAILED =
  'the database could not be synced to disk; restart the service so that it recovers from what the disk holds';

describe('ingest when the store cannot sync its disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-storage-failed-'));
  /** What the management API logged as errors. */
  const logged: { err: unknown; message: string }[] = [];
  /** The sender's log lines at level error and above, as pino writes them. */
  const senderLog = capturedLog();
  const senderErrors = () =>
    senderLog
      .lines()
      .filter((line) => line.level >= 50)
      .map((line) => [line.err.code, line.msg]);
  const file = join(dir, 'x.db');
  let api: Api;
  beforeAll(async () => {
    const store = createSqliteStore({ filename: file });
    api = await startApi(
      createTestCertificates(),
      {
        store,
        logger: senderLog.logger,
      },
      {
        logger: {
          error: (entry: { err: unknown }, message: string) => logged.push({ err: entry.err, message }),
        } as never,
      },
    );
  });
  afterAll(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const event = (clickId: string) => ({
    account_id: api.alice.account.id,
    event: 'click',
    data: { ...sampleEventData('click'), click_id: clickId },
  });

  /** Every sync from now on fails, and the store refuses every publish after the first that does. */
  const failSyncs = () => {
    disk.failing = true;
  };

  const healthz = async () => {
    const res = await fetch(`${api.base}/healthz`);
    return { status: res.status, json: await res.json() };
  };

  it('answers a single event 503 storage_failed, logs it, and /healthz answers 503 from then on', async () => {
    expect(await healthz()).toEqual({ status: 200, json: { ok: true } });
    expect(senderErrors()).toEqual([]);

    failSyncs();
    const res = await api.call('POST', '/internal/v1/events', {
      key: SERVICE_TOKEN,
      body: event('clk_single'),
    });
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: { code: 'storage_failed', message: SYNC_FAILED } });
    // Logged once, by the sender (below), not again by the API for each refused request.
    expect(logged).toEqual([]);
    expect(await healthz()).toEqual({
      status: 503,
      json: { ok: false, error: { code: 'storage_failed', message: SYNC_FAILED } },
    });
  });

  it('answers each valid item of a batch 503 storage_failed in its place, an invalid one its own 400', async () => {
    failSyncs();
    const res = await api.call('POST', '/internal/v1/events/batch', {
      key: SERVICE_TOKEN,
      body: { events: [event('clk_a'), { account_id: api.alice.account.id }, event('clk_b')] },
    });
    expect(res.status).toBe(202);
    const results = res.json.results as { status: number; error: { code: string; message: string } }[];
    expect(results.map((r) => [r.status, r.error.code])).toEqual([
      [503, 'storage_failed'],
      [400, 'invalid_request'],
      [503, 'storage_failed'],
    ]);
    expect(results[0]!.error.message).toBe(SYNC_FAILED);
    expect((await healthz()).status).toBe(503);
    // The sender logged the failure once, for every publish it refused since; the API, none.
    expect(logged).toEqual([]);
    expect(senderErrors()).toEqual([
      ['storage_failed', 'published events can no longer be made durable; restart the service'],
    ]);
    // Any other change is refused as well, before it is written.
    const before = (await api.call('GET', '/v1/endpoints')).json;
    const created = await api.call('POST', '/v1/endpoints', {
      body: { url: 'https://127.0.0.1:9/hooks/after-failure', events: ['click'] },
    });
    expect([created.status, created.json.error?.code]).toEqual([503, 'storage_failed']);
    expect((await api.call('GET', '/v1/endpoints')).json).toEqual(before);
  });
});

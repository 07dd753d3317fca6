/**
 * Operator notices survive a SIGKILL (design D50): a sender process disables an endpoint while the
 * operator's receiver hangs on the notices, is killed with SIGKILL during those sends, and a
 * restarted process delivers both notices, the same ones, once their leases lapse. The notice is
 * written with the change it reports, so no window between the two loses it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSecret, verifySignature } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { type RawReceiver, startRawReceiver } from './helpers/raw-receiver.js';
import { type SenderProcess, startSenderProcess } from './helpers/sender-process.js';
import { PG_URL, requireService } from './helpers/services.js';

const ACCOUNT = 'acct_notice_crash';
const SECRET = generateSecret();
let receiver: RawReceiver;
let dir: string;
let caFile: string;
const children: SenderProcess[] = [];

beforeAll(async () => {
  receiver = await startRawReceiver();
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-notice-crash-'));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, receiver.certs.ca);
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

function battery(name: string, open: () => SenderStore & { db: string; pgSchema?: string }) {
  it(`loses no operator notice on ${name}`, async () => {
    const route = `crash-${name}`;
    const ops = `${route}-ops`;
    let operatorUp = false;
    const endpointUrl = receiver.route(route, () => ({ status: 500 }));
    const operatorUrl = receiver.route(ops, () => (operatorUp ? { status: 204 } : null));
    const store = open();
    await store.migrate();
    const setup = createSender({ store, allowPrivateNetworks: true, ca: receiver.certs.ca });
    await setup.createEndpoint(ACCOUNT, { url: endpointUrl, events: ['click'] });
    await setup.stop(0);
    await store.close();
    const env = {
      DB: store.db,
      ...(store.pgSchema ? { PG_SCHEMA: store.pgSchema } : {}),
      ACCOUNT,
      CA: caFile,
      OPERATOR_URL: operatorUrl,
      OPERATOR_SECRET: SECRET,
      // Two deliveries that fail for good within a second disable the endpoint (threshold 2).
      RETRY_DELAYS_MS: '50',
      DISABLE_THRESHOLD: '2',
      // A hanging notice holds its lease for the longest a request can be out (twice the deadline)
      // plus a lease: 3 + 1.5 s here.
      ATTEMPT_TIMEOUT_MS: '1500',
      LEASE_MS: '1500',
    };
    const sent = () =>
      receiver.requests
        .filter((r) => r.route === ops)
        .map((r) => ({ ...r, json: JSON.parse(r.body.toString()) as { type: string; notice_id: string } }));
    const types = (list: ReturnType<typeof sent>) => new Set(list.map((n) => n.json.type));

    const first = startSenderProcess({ ...env, BURST_FROM: '0', BURST_TO: '2' });
    children.push(first);
    await receiver.until(() => types(sent()).has('endpoint.disabled'));
    await first.kill('SIGKILL');
    const hung = sent();
    expect(types(hung)).toEqual(new Set(['endpoint.failing', 'endpoint.disabled']));
    const ids = new Set(hung.map((n) => n.json.notice_id));

    operatorUp = true;
    const second = startSenderProcess(env);
    children.push(second);
    const answered = () => sent().filter((n) => n.answer?.status === 204);
    await receiver.until(() => types(answered()).size === 2, 20_000);
    await second.kill('SIGTERM');
    // The same notices, signed, each answered once: nothing new was made up by the restart.
    for (const n of answered()) {
      expect(ids.has(n.json.notice_id)).toBe(true);
      expect(verifySignature(n.body, n.headers['x-service-signature'] as string, SECRET).valid).toBe(true);
    }
    expect(
      answered()
        .map((n) => n.json.type)
        .sort(),
    ).toEqual(['endpoint.disabled', 'endpoint.failing']);
  }, 60_000);
}

describe('operator notices across a SIGKILL', () => {
  battery('sqlite', () => {
    const file = join(dir, 'notices.db');
    return Object.assign(createSqliteStore({ filename: file }), { db: `sqlite:${file}` });
  });
});

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('operator notices across a SIGKILL, PostgreSQL', () => {
  const schemas = pgSchemas('lh_notice_crash');
  afterAll(() => schemas.drop());
  battery('postgres', () => {
    const schema = schemas.fresh();
    return Object.assign(createPostgresStore({ connectionString: PG_URL, schema }), {
      db: PG_URL,
      pgSchema: schema,
    });
  });
});

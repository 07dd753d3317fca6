/**
 * Endpoint secrets at rest, through `linkhooks-sender` as an operator runs it (design D29, D30):
 * a default SQLite set-up keeps no secret or API key in plaintext in its files; a database with
 * plaintext secrets is encrypted at start; a master key rotates while every delivery still
 * verifies at a real HTTPS receiver; a plaintext secret slipped in afterwards is refused; and
 * PostgreSQL without a key does not start.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { keyId } from '../src/store/secret-cipher.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';
import { PG_URL } from './helpers/services.js';

const TOKEN = 'svc_secrets_at_rest_0123456789';
let dir: string;
let receiver: HttpsReceiver;
let env: Record<string, string>;
const started: CliService[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-at-rest-'));
  receiver = await startHttpsReceiver();
  writeFileSync(join(dir, 'ca.pem'), receiver.certs.ca);
  env = {
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    LINKHOOKS_LOG_LEVEL: 'info',
  };
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(db: string, extraEnv: Record<string, string> = {}) {
  const service = startCli(['serve', '--db', `sqlite:${db}`, '--port', '0', '--allow-private-networks'], {
    ...env,
    ...extraEnv,
  });
  started.push(service);
  const line = await service.logged((l) => typeof l.url === 'string', 'listening');
  return { service, base: line.url as string };
}

async function api(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

async function account(db: string) {
  const out = await runCli([
    'accounts',
    'create',
    '--name',
    'Rest',
    '--plan',
    'business',
    '--json',
    '--db',
    `sqlite:${db}`,
  ]);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as { id: string; api_key: string };
}

let clicks = 0;
/** Publishes a click to the account and resolves once `route` received it, verified with its secret. */
async function deliveredTo(base: string, accountId: string, route: string) {
  const clickId = `clk_rest_${++clicks}`;
  const res = await api(base, 'POST', '/internal/v1/events', TOKEN, {
    account_id: accountId,
    event: 'link.deleted',
    data: { link_id: clicks, slug: clickId },
  });
  expect(res.status).toBe(202);
  await receiver.until(
    () =>
      receiver.received.some(
        (r) => r.route === route && (r.event.data as { slug?: string }).slug === clickId,
      ),
    20_000,
  );
}

/** The bytes of the database and its -wal and -shm files. */
function databaseBytes(db: string): Buffer {
  return Buffer.concat([db, `${db}-wal`, `${db}-shm`].filter(existsSync).map((f) => readFileSync(f)));
}

function storedSecret(db: string, id: string): string {
  const raw = new Database(db, { readonly: true });
  const row = raw.prepare('SELECT secret FROM endpoints WHERE id = ?').get(id) as { secret: string };
  raw.close();
  return row.secret;
}

describe('a default SQLite set-up (design D29)', () => {
  it('keeps no endpoint secret or API key in plaintext, in a key file made once, owner-only', async () => {
    const db = join(dir, 'default.db');
    const acct = await account(db);
    const { service, base } = await serve(db);
    const keyFile = `${db}.master-key`;
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(service.logs.filter((l) => /generated the master key file/.test(l.msg))).toHaveLength(1);

    const created = await api(base, 'POST', '/v1/endpoints', acct.api_key, {
      url: receiver.route('default', 'pending'),
      events: ['link.deleted'],
    });
    expect(created.status).toBe(201);
    const secret = created.json.secret as string;
    receiver.route('default', secret);
    await deliveredTo(base, acct.id, 'default');
    expect(storedSecret(db, created.json.id)).toMatch(/^lhenc:v2:[0-9a-f]{8}:/);

    for (const bytes of [databaseBytes(db)]) {
      expect(bytes.includes(secret)).toBe(false);
      expect(bytes.includes(acct.api_key)).toBe(false);
    }
    expect(await service.stop()).toBe(0);
    const atRest = databaseBytes(db);
    expect(atRest.includes(secret)).toBe(false);
    expect(atRest.includes(acct.api_key)).toBe(false);
    expect(service.output()).not.toContain(key);
    expect(service.output()).not.toContain(secret);

    // Restarted, it reuses the key: the stored secret still signs.
    const again = await serve(db);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);
    expect(again.service.logs.some((l) => /generated the master key file/.test(l.msg))).toBe(false);
    await deliveredTo(again.base, acct.id, 'default');
    expect(await again.service.stop()).toBe(0);
  });

  it('of two processes starting at once on a new database, runs one, with one key made', async () => {
    const db = join(dir, 'race.db');
    const workers = [0, 1].map(() => {
      const w = startCli(['worker', '--db', `sqlite:${db}`], env);
      started.push(w);
      return w;
    });
    // On SQLite one process delivers (cli-sqlite-one-process.test.ts): the other is refused.
    const outcomes = await Promise.allSettled(
      workers.map((w) => w.logged((l) => /worker delivering/.test(l.msg), 'start')),
    );
    expect(outcomes.map((o) => o.status).sort(), workers.map((w) => w.output()).join('\n---\n')).toEqual([
      'fulfilled',
      'rejected',
    ]);
    const refused = workers[outcomes.findIndex((o) => o.status === 'rejected')]!;
    expect(await refused.stop()).toBe(1);
    expect(refused.output()).toContain('another linkhooks-sender process is serving');
    const generated = workers.flatMap((w) =>
      w.logs.filter((l) => /generated the master key file/.test(l.msg)),
    );
    expect(generated).toHaveLength(1);
    expect(statSync(`${db}.master-key`).mode & 0o777).toBe(0o600);
    await Promise.all(workers.map((w) => w.stop()));
  });
});

describe('a master-key file that cannot be read', () => {
  it('stops the start before anything is written: no database folder, lock or key file', async () => {
    for (const flag of ['--master-key-file', '--previous-master-key-file']) {
      const fresh = join(dir, `fresh${flag}`);
      const out = await runCli([
        'serve',
        '--db',
        `sqlite:${join(fresh, 'x.db')}`,
        '--port',
        '0',
        flag,
        join(dir, 'nope.key'),
      ]);
      expect(out.code, flag).toBe(1);
      expect(out.stderr).toContain(`${flag}: cannot read the master key file ${join(dir, 'nope.key')}`);
      expect(existsSync(fresh), `${flag}: nothing is written before the refusal`).toBe(false);
    }
  });
});

describe('secrets written without a key (design D29)', () => {
  it('are encrypted at start, counted in the log, and still sign; plaintext slipped in later is refused', async () => {
    const db = join(dir, 'plaintext.db');
    const store = createSqliteStore({ filename: db });
    await store.migrate();
    const library = createSender({ store, allowPrivateNetworks: true, ca: receiver.certs.ca });
    const { account: acct, apiKey } = await library.createAccount({ name: 'Old', plan: 'business' });
    const secrets: string[] = [];
    let first = '';
    for (let i = 0; i < 3; i++) {
      const e = await library.createEndpoint(acct.id, {
        url: receiver.route(`plain${i}`, 'x'),
        events: ['link.deleted'],
      });
      receiver.route(`plain${i}`, e.secret);
      secrets.push(e.secret);
      first ||= e.id;
    }
    await library.stop(0);
    await store.close();
    expect(databaseBytes(db).includes(secrets[0]!)).toBe(true);

    const masterKey = randomBytes(32).toString('base64');
    const { service, base } = await serve(db, { LINKHOOKS_MASTER_KEY: masterKey });
    const sealedLine = service.logs.find((l) => /encrypted under the current master key/.test(l.msg));
    expect(sealedLine).toMatchObject({ sealed: 3, resealed: 0 });
    expect(existsSync(`${db}.master-key`)).toBe(false);
    expect(storedSecret(db, first)).toMatch(
      new RegExp(`^lhenc:v2:${keyId(Buffer.from(masterKey, 'base64'))}:`),
    );
    await deliveredTo(base, acct.id, 'plain0');
    for (const s of secrets) expect(service.output()).not.toContain(s);

    // Something that bypasses the key writes a plaintext secret: it is refused, never used.
    const raw = new Database(db);
    raw.prepare('UPDATE endpoints SET secret = ? WHERE id = ?').run('whsec_slipped_in_plaintext', first);
    raw.close();
    const read = await api(base, 'GET', `/v1/endpoints/${first}/secret`, apiKey);
    expect(read.status).toBe(500);
    expect(JSON.stringify(read.json)).not.toMatch(/whsec_|MASTER_KEY/);
    await service.logged(
      (l) => (l.err as { code?: string } | undefined)?.code === 'secret_not_encrypted',
      'refusal',
    );
    await api(base, 'POST', '/internal/v1/events', TOKEN, {
      account_id: acct.id,
      event: 'link.deleted',
      data: { link_id: 1, slug: 'held' },
    });
    await service.logged((l) => /delivery is held back/.test(l.msg), 'held back delivery');
    expect(
      receiver.received.some(
        (r) => r.route === 'plain0' && (r.event.data as { slug: string }).slug === 'held',
      ),
    ).toBe(false);
    expect(service.output()).not.toContain('whsec_slipped_in_plaintext');

    expect(await service.stop()).toBe(0);
    for (const s of secrets) expect(databaseBytes(db).includes(s)).toBe(false);
  });
});

describe('rotating the master key (design D30)', () => {
  it('keeps every delivery signing before, during and after a rotation of given keys', async () => {
    const db = join(dir, 'rotate.db');
    const acct = await account(db);
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = await serve(db, { LINKHOOKS_MASTER_KEY: oldKey.toString('base64') });
    const created = await api(before.base, 'POST', '/v1/endpoints', acct.api_key, {
      url: receiver.route('rotate', 'x'),
      events: ['link.deleted'],
    });
    receiver.route('rotate', created.json.secret);
    await deliveredTo(before.base, acct.id, 'rotate');
    expect(storedSecret(db, created.json.id)).toMatch(new RegExp(`^lhenc:v2:${keyId(oldKey)}:`));
    await before.service.stop();

    // During: the new key, the old one still accepted (here as a file); start re-encrypts.
    const oldFile = join(dir, 'old.key');
    writeFileSync(oldFile, oldKey.toString('hex'), { mode: 0o600 });
    const during = await serve(db, {
      LINKHOOKS_MASTER_KEY: newKey.toString('base64'),
      LINKHOOKS_PREVIOUS_MASTER_KEY_FILE: oldFile,
    });
    expect(during.service.logs.find((l) => /encrypted under the current/.test(l.msg))).toMatchObject({
      resealed: 1,
    });
    expect(
      during.service.logs.some((l) =>
        /LINKHOOKS_PREVIOUS_MASTER_KEY can be removed only once every process seals with this same key/.test(
          l.msg,
        ),
      ),
    ).toBe(true);
    await deliveredTo(during.base, acct.id, 'rotate');
    expect(storedSecret(db, created.json.id)).toMatch(new RegExp(`^lhenc:v2:${keyId(newKey)}:`));
    await during.service.stop();

    // After: the old key dropped.
    const after = await serve(db, { LINKHOOKS_MASTER_KEY: newKey.toString('base64') });
    await deliveredTo(after.base, acct.id, 'rotate');
    await after.service.stop();

    // The old key alone no longer opens it: deliveries wait, and the log says why.
    const stale = await serve(db, { LINKHOOKS_MASTER_KEY: oldKey.toString('base64') });
    await stale.service.logged((l) => /no configured master key opens/.test(l.msg), 'unreadable count');
    await stale.service.stop();
  });

  it('rotates the SQLite key file with rotate-master-key, and deliveries sign after', async () => {
    const db = join(dir, 'rotate-file.db');
    const acct = await account(db);
    const first = await serve(db);
    const created = await api(first.base, 'POST', '/v1/endpoints', acct.api_key, {
      url: receiver.route('rotate-file', 'x'),
      events: ['link.deleted'],
    });
    receiver.route('rotate-file', created.json.secret);
    const oldKey = readFileSync(`${db}.master-key`, 'utf8').trim();
    // Beside the running service it would go on sealing under the replaced key: refused, nothing written.
    const beside = await runCli(['rotate-master-key', '--db', `sqlite:${db}`]);
    expect(beside.code).toBe(1);
    expect(beside.stderr).toMatch(
      `another linkhooks-sender process is serving sqlite:${db}: stop it before rotate-master-key, then start it again.`,
    );
    expect(existsSync(`${db}.master-key.next`)).toBe(false);
    expect(readFileSync(`${db}.master-key`, 'utf8').trim()).toBe(oldKey);
    await first.service.stop();

    const rotated = await runCli(['rotate-master-key', '--db', `sqlite:${db}`]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/Encrypted 1 endpoint secrets again/);
    // What next names the file the old key is kept in, to delete once every process runs on the new one.
    expect(rotated.stdout).toContain(`The old key is kept in ${db}.master-key.previous; delete that file`);
    const newKey = readFileSync(`${db}.master-key`, 'utf8').trim();
    expect(newKey).not.toBe(oldKey);
    expect(existsSync(`${db}.master-key.next`)).toBe(false);
    expect(statSync(`${db}.master-key`).mode & 0o777).toBe(0o600);
    expect(`${rotated.stdout}${rotated.stderr}`).not.toContain(newKey);
    expect(storedSecret(db, created.json.id)).toMatch(
      new RegExp(`^lhenc:v2:${keyId(Buffer.from(newKey, 'base64'))}:`),
    );

    const after = await serve(db);
    await deliveredTo(after.base, acct.id, 'rotate-file');
    await after.service.stop();
  });
});

describe('PostgreSQL without a master key (design D29)', () => {
  it('does not start, and says how to make a key', async () => {
    for (const command of ['serve', 'worker', 'rotate-master-key']) {
      const out = await runCli([command, '--db', `${PG_URL}?schema=never_opened`], {
        LINKHOOKS_MASTER_KEY: '',
      });
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/PostgreSQL needs a master key/);
      expect(out.stderr).toMatch(/openssl rand -base64 32/);
      expect(out.stderr).toMatch(/LINKHOOKS_MASTER_KEY/);
    }
  });
});

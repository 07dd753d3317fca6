/**
 * `linkhooks-sender dev-certificate` and `--ca-file`, as a platform engineer tries the service on
 * a laptop: the certificate it writes serves a local HTTPS receiver, and `serve --ca-file` trusts
 * it without NODE_EXTRA_CA_CERTS; `serve` says where the API, the dashboard and the metrics are.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

const TOKEN = 'svc_dev_cert_token_abcdefghijklmnop';
let dir: string;
let receiver: HttpsReceiver | undefined;
let service: CliService | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-dev-cert-'));
});
afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function http(base: string, path: string, key: string, body: unknown) {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('linkhooks-sender dev-certificate', () => {
  it('writes a CA and a localhost certificate, and refuses to overwrite them without --force', async () => {
    const certs = join(dir, 'certs');
    const made = await runCli(['dev-certificate', '--dir', certs]);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`--ca-file ${join(certs, 'ca.pem')}`);
    expect(statSync(join(certs, 'localhost-key.pem')).mode & 0o777).toBe(0o600);
    const ca = readFileSync(join(certs, 'ca.pem'), 'utf8');

    const again = await runCli(['dev-certificate', '--dir', certs]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists; pass --force/);
    expect(readFileSync(join(certs, 'ca.pem'), 'utf8')).toBe(ca);
    const forced = await runCli(['dev-certificate', '--dir', certs, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(join(certs, 'ca.pem'), 'utf8')).not.toBe(ca);
  });

  it('serves a receiver that serve --ca-file trusts, and serve prints its addresses', async () => {
    const certs = join(dir, 'trusted');
    expect((await runCli(['dev-certificate', '--dir', certs])).code).toBe(0);
    receiver = await startHttpsReceiver({
      ca: readFileSync(join(certs, 'ca.pem'), 'utf8'),
      cert: readFileSync(join(certs, 'localhost.pem'), 'utf8'),
      key: readFileSync(join(certs, 'localhost-key.pem'), 'utf8'),
    });
    const db = `sqlite:${join(dir, 'dev.db')}`;
    const created = await runCli([
      'accounts',
      'create',
      '--name',
      'Dev',
      '--plan',
      'business',
      '--json',
      '--db',
      db,
    ]);
    const account = JSON.parse(created.stdout) as { id: string; api_key: string };

    const env = { LINKHOOKS_SERVICE_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: '' };
    service = startCli(
      ['serve', '--db', db, '--port', '0', '--allow-private-networks', '--ca-file', join(certs, 'ca.pem')],
      env,
    );
    const ready = await service.logged((l) => typeof l.dashboard === 'string', 'listening');
    const base = ready.url as string;
    expect(ready).toMatchObject({
      api: `${base}/v1`,
      dashboard: `${base}/dashboard`,
      metrics: `${base}/metrics`,
      ingest: `${base}/internal/v1/events`,
      caFile: join(certs, 'ca.pem'),
    });
    expect(service.output()).not.toContain('BEGIN CERTIFICATE');

    const endpoint = await http(base, '/v1/endpoints', account.api_key, {
      url: `${receiver.origin}/hooks/dev`,
      events: ['click'],
    });
    expect(endpoint.status, JSON.stringify(endpoint.json)).toBe(201);
    receiver.route('dev', endpoint.json.secret);
    const data = { ...sampleEventData('click'), click_id: 'clk_dev_cert_1' };
    const ingest = await http(base, '/internal/v1/events', TOKEN, {
      account_id: account.id,
      event: 'click',
      data,
    });
    expect(ingest.status).toBe(202);
    await receiver.until(() => receiver!.received.some((r) => r.route === 'dev'), 20_000);
    expect(receiver.received.find((r) => r.route === 'dev')?.event.data).toMatchObject({
      click_id: 'clk_dev_cert_1',
    });
  });

  it('names a --ca-file it cannot use, before opening anything', async () => {
    // A first start: the database's folder, its lock and its master-key file would be made.
    const fresh = join(dir, 'fresh');
    const missing = await runCli([
      'serve',
      '--db',
      `sqlite:${join(fresh, 'x.db')}`,
      '--ca-file',
      join(dir, 'nope.pem'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--ca-file: cannot read .*nope\.pem \(no such file\)/);
    expect(existsSync(fresh), 'nothing is written before the refusal').toBe(false);
    const notPem = await runCli([
      'worker',
      '--db',
      `sqlite:${join(dir, 'x.db')}`,
      '--ca-file',
      join(dir, 'x.db'),
    ]);
    expect(notPem.code).toBe(1);
  });
});

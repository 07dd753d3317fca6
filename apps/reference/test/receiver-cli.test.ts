/**
 * The customer's `linkhooks trigger` against the reference app's sample receiver over HTTPS (its
 * CA trusted with NODE_EXTRA_CA_CERTS, as a developer would), and against the same receiver
 * switched to check a wrong secret, which rejects.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceApp, startReferenceApp } from '../src/reference-app.js';

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@linkhooks/receiver/package.json')), 'dist', 'cli.js');
let app: ReferenceApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-reference-cli-'));
  app = await startReferenceApp({ dbFile: join(dir, 'reference.db') });
  writeFileSync(join(dir, 'ca.pem'), app.ca);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI in a child process, asynchronously: the receiver lives in this one. */
async function trigger(secret: string) {
  return new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [CLI, 'trigger', 'click', '--url', app.receiver.url, '--secret', secret],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
      },
    );
    let stdout = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

describe('linkhooks trigger against the reference receiver', () => {
  it('is verified and handled by the sample receiver', async () => {
    const before = app.receiver.received.length;
    const out = await trigger(app.endpoint.secret);
    expect(out.stdout).toMatch(/✓ 200 in \d+ ms: \{"received":true\}/);
    expect(out.code).toBe(0);
    expect(app.receiver.received.length).toBe(before + 1);
  });

  it('is refused by the receiver switched to a wrong secret', async () => {
    app.receiver.setMode('wrong-secret');
    const out = await trigger(app.endpoint.secret);
    app.receiver.setMode('ok');
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/✗ 401/);
  });

  it('is refused with a secret the receiver does not know', async () => {
    const out = await trigger('whsec_not_an_endpoint_secret_at_all_000000000');
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/✗ 401 .*invalid_signature/);
  });
});

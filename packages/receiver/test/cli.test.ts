/**
 * The `linkhooks` command line, run as a customer would (the built dist/cli.js): `trigger` against a
 * real Express receiver built on this SDK, against one that rejects, a redirect and a closed port;
 * `verify` on a real signed delivery and on each usual mistake; the secret from a flag, a file or the
 * environment.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookMiddleware } from '../src/adapters/express.js';
import type { WebhookEvent } from '../src/index.js';
import { buildEvent, generateSecret, signedDelivery } from '../src/testing.js';
import { close, listen } from './helpers/servers.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const secret = generateSecret();
const received: WebhookEvent[] = [];
/** What the Standard Webhooks route saw: the webhook-id and the test flag of each delivery. */
const standardSeen: { webhookId: string | undefined; test: boolean }[] = [];
let server: Server;
let base: string;
let dir: string;

function run(args: string[], options: { stdin?: string | Buffer; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** A delivery signed with `secret`, as `verify` is given it. */
const delivery = signedDelivery({ secret, event: buildEvent('click') });
const signature = delivery.headers['x-service-signature']!;
/** Writes `content` to a file in the test's folder; returns its path. */
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-cli-'));
  const app = express();
  const record = (event: WebhookEvent) => {
    received.push(event);
  };
  app.post(
    '/hooks',
    webhookMiddleware({ secret, on: { click: record, conversion: record, unknown: record } }),
  );
  app.post('/rejects', webhookMiddleware({ secret: generateSecret(), on: {} }));
  app.post(
    '/standard',
    webhookMiddleware({
      secret,
      scheme: 'standard-webhooks',
      on: { click: (_e, ctx) => void standardSeen.push({ webhookId: ctx.webhookId, test: ctx.test }) },
      onError: () => {},
    }),
  );
  app.post('/moved', (_req, res) => res.redirect(307, '/hooks'));
  server = createServer(app);
  base = await listen(server);
});
afterAll(async () => {
  await close(server);
  rmSync(dir, { recursive: true, force: true });
});

describe('linkhooks trigger', () => {
  it('sends a signed, schema-valid sample delivery that the SDK verifies, and reports the 200', async () => {
    const out = await run([
      'trigger',
      'click',
      '--url',
      `${base}/hooks`,
      '--secret',
      secret,
      '--data',
      '{"country":"FR"}',
    ]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/→ POST .*\/hooks {2}click \(\d+ bytes, event evt_/);
    expect(out.stdout).toMatch(/✓ 200 in \d+ ms: \{"received":true\}/);
    expect(received.at(-1)).toMatchObject({ event: 'click', data: { country: 'FR' } });
  });

  it('takes the secret from LINKHOOKS_SECRET and works for every event', async () => {
    const out = await run(['trigger', 'conversion', '--url', `${base}/hooks`], {
      env: { LINKHOOKS_SECRET: secret },
    });
    expect(out.code).toBe(0);
    expect(received.at(-1)?.event).toBe('conversion');
  });

  it('reports a receiver that rejects the signature, a redirect and a closed port, exiting 1', async () => {
    const rejected = await run(['trigger', 'click', '--url', `${base}/rejects`, '--secret', secret]);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toMatch(/✗ 401 in \d+ ms: .*invalid_signature/);
    expect(rejected.stdout).toMatch(/is it configured with this secret/);
    const moved = await run(['trigger', 'click', '--url', `${base}/moved`, '--secret', secret]);
    expect(moved.code).toBe(1);
    expect(moved.stdout).toMatch(/✗ 307/);
    expect(moved.stdout).toMatch(/never follows redirects/);
    const gone = createServer();
    const goneUrl = await listen(gone);
    await close(gone); // a port that was just free: nothing listens there now
    const closed = await run(['trigger', 'click', '--url', `${goneUrl}/hooks`, '--secret', secret]);
    expect(closed.code).toBe(1);
    expect(closed.stdout).toMatch(/✗ no answer after \d+ ms: ECONNREFUSED/);
  });

  it('refuses bad input with a usage error (exit 2)', async () => {
    for (const args of [
      ['trigger', 'clicks', '--url', `${base}/hooks`, '--secret', secret],
      ['trigger', 'click', '--secret', secret],
      ['trigger', 'click', '--url', 'not a url', '--secret', secret],
      ['trigger', 'click', '--url', `${base}/hooks`, '--secret', secret, '--data', '[1]'],
      ['trigger', 'click', '--url', `${base}/hooks`, '--colour', 'red'],
      ['frobnicate'],
    ]) {
      const out = await run(args, { env: { LINKHOOKS_SECRET: '' } });
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toMatch(/^linkhooks: /);
    }
  });

  it('says which field of --data does not fit the event, and why a secret cannot sign (exit 2)', async () => {
    const data = await run(
      ['trigger', 'click', '--url', `${base}/hooks`, '--secret', secret, '--data', '{"country":5}'],
      { env: { LINKHOOKS_SECRET: '' } },
    );
    expect(data.code).toBe(2);
    expect(data.stderr).toMatch(/^linkhooks: --data does not make a valid click event: at data\.country: /);
    expect(data.stderr).not.toMatch(/^\s+at /m);
    const blank = await run(['trigger', 'click', '--url', `${base}/hooks`, '--secret', '   '], {
      env: { LINKHOOKS_SECRET: '' },
    });
    expect(blank.code).toBe(2);
    expect(blank.stderr.split('\n')[0]).toBe('linkhooks: the secret cannot sign: The secret is blank.');
    const standard = await run(
      ['trigger', 'click', '--url', `${base}/hooks`, '--secret', '   ', '--scheme', 'standard-webhooks'],
      { env: { LINKHOOKS_SECRET: '' } },
    );
    expect(standard.code).toBe(2);
    expect(standard.stderr.split('\n')[0]).toBe('linkhooks: the secret cannot sign: The secret is blank.');
  });
});

describe('linkhooks trigger --scheme standard-webhooks', () => {
  it('sends the Standard Webhooks headers, which a receiver in that scheme accepts, and --test marks it', async () => {
    const out = await run(
      ['trigger', 'click', '--url', `${base}/standard`, '--scheme', 'standard-webhooks', '--test'],
      { env: { LINKHOOKS_SECRET: secret } },
    );
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toMatch(/Standard Webhooks headers, test delivery\)/);
    expect(out.stdout).toMatch(/✓ 200/);
    const eventId = /event (evt_\w+)/.exec(out.stdout)![1];
    expect(standardSeen.at(-1)).toEqual({ webhookId: eventId, test: true });
  });

  it('reports the 401 of a body-only delivery sent to that receiver, and suggests the scheme', async () => {
    const before = standardSeen.length;
    const out = await run(['trigger', 'click', '--url', `${base}/standard`], {
      env: { LINKHOOKS_SECRET: secret },
    });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/✗ 401/);
    expect(out.stdout).toMatch(/try --scheme standard-webhooks/);
    expect(standardSeen.length).toBe(before);
  });

  it('refuses an unknown scheme, and a secret that is not base64, as usage errors', async () => {
    const env = { LINKHOOKS_SECRET: secret };
    const unknown = await run(['trigger', 'click', '--url', `${base}/standard`, '--scheme', 'svix'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--scheme is standard-webhooks or x-service-signature/);
    const notBase64 = await run([
      'trigger',
      'click',
      '--url',
      `${base}/standard`,
      '--scheme',
      'standard-webhooks',
      '--secret',
      'not a secret!',
    ]);
    expect(notBase64.code).toBe(2);
    expect(notBase64.stderr).toMatch(/whsec_ followed by base64/);
  });
});

describe('linkhooks verify --scheme standard-webhooks', () => {
  const NOW = 1_795_507_200;
  const standard = signedDelivery({
    secret,
    event: buildEvent('click'),
    scheme: 'standard-webhooks',
    timestamp: NOW - 3600,
  });
  const header = (name: string) => ['--header', `${name}: ${standard.headers[name]}`];
  const all = [...header('webhook-id'), ...header('webhook-timestamp'), ...header('webhook-signature')];
  const verify = (args: string[]) =>
    run(['verify', '--scheme', 'standard-webhooks', '--secret', secret, ...args], { stdin: standard.body });

  it('says valid as of the time given with --now, and stale as of now, with the skew', async () => {
    const then = await verify([...all, '--now', String(NOW - 3590)]);
    expect(then.code, then.stderr).toBe(0);
    expect(then.stdout).toMatch(/✓ valid: .*10 s old, within the 300 s tolerance/);
    const today = await verify([...all, '--now', String(NOW)]);
    expect(today.code).toBe(1);
    expect(today.stdout).toMatch(/✗ invalid: webhook-timestamp is 3600 s old.*signature itself matches/);
    const wider = await verify([...all, '--now', String(NOW), '--tolerance', '3600']);
    expect(wider.code).toBe(0);
  });

  it('names a missing header, and takes the svix-* names', async () => {
    const missing = await verify([
      ...header('webhook-id'),
      ...header('webhook-signature'),
      '--now',
      String(NOW - 3600),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/webhook-timestamp header is missing/);
    const svix = ['id', 'timestamp', 'signature'].flatMap((n) => [
      '--header',
      `svix-${n}: ${standard.headers[`webhook-${n}`]}`,
    ]);
    expect((await verify([...svix, '--now', String(NOW - 3600)])).code).toBe(0);
  });

  it('recognises a body-only delivery given to a Standard Webhooks check', async () => {
    const out = await verify(['--signature', standard.headers['x-service-signature']!]);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/X-Service-Signature only.*default scheme would accept it/);
  });

  it('refuses --now and --tolerance without the scheme', async () => {
    const out = await run(['verify', '--secret', secret, '--signature', signature, '--now', '1'], {
      stdin: delivery.body,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/apply to --scheme standard-webhooks/);
  });
});

describe('linkhooks verify', () => {
  it('says valid for a real delivery, from a file or standard input', async () => {
    const fromFile = await run([
      'verify',
      '--secret',
      secret,
      '--signature',
      signature,
      '--file',
      file('ok.json', delivery.body),
    ]);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toMatch(/✓ valid/);
    const fromStdin = await run(['verify', '--secret', secret, '--signature', signature], {
      stdin: delivery.body,
    });
    expect(fromStdin.code).toBe(0);
  });

  it.each([
    [
      'a sha256= prefix',
      () => ['--signature', `sha256=${signature}`, '--secret', secret],
      delivery.body,
      /"sha256=" prefix.*without the prefix it matches/,
    ],
    [
      'whitespace in the secret',
      () => ['--signature', signature, '--secret', `${secret}\n`],
      delivery.body,
      /whitespace/,
    ],
    [
      'a re-serialised body',
      () => ['--signature', signature, '--secret', secret],
      JSON.stringify(JSON.parse(delivery.body), null, 2),
      /re-formatted/,
    ],
    [
      'a final newline',
      () => ['--signature', signature, '--secret', secret],
      `${delivery.body}\n`,
      /ends with a newline/,
    ],
    [
      'the wrong secret',
      () => ['--signature', signature, '--secret', generateSecret()],
      delivery.body,
      /another endpoint's/,
    ],
    ['not a signature', () => ['--signature', 'abc', '--secret', secret], delivery.body, /64 hex digits/],
  ] as const)('explains %s', async (_label, argv, body, reason) => {
    const out = await run(['verify', ...argv(), '--file', file('body.json', body)]);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^✗ invalid/);
    expect(out.stdout).toMatch(reason);
  });

  it('needs a signature and a secret', async () => {
    expect((await run(['verify', '--secret', secret])).code).toBe(2);
    expect((await run(['verify', '--signature', signature], { env: { LINKHOOKS_SECRET: '' } })).code).toBe(2);
  });
});

describe('the secret from a file or the environment', () => {
  // No LINKHOOKS_SECRET from the machine running the tests may stand in for the one under test.
  const noEnv = { LINKHOOKS_SECRET: '' };

  it('trigger signs with --secret-file (its final newline ignored), ahead of LINKHOOKS_SECRET', async () => {
    const before = received.length;
    const out = await run(
      ['trigger', 'click', '--url', `${base}/hooks`, '--secret-file', file('secret', `${secret}\n`)],
      { env: { LINKHOOKS_SECRET: generateSecret() } },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/✓ 200/);
    expect(received.length).toBe(before + 1);
  });

  it('verify reads the secret from --secret-file and the body from standard input', async () => {
    const out = await run(
      ['verify', '--secret-file', file('secret', `${secret}\n`), '--signature', signature],
      { stdin: delivery.body, env: noEnv },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/✓ valid/);
  });

  it('verify takes the secret from LINKHOOKS_SECRET', async () => {
    const out = await run(['verify', '--signature', signature], {
      stdin: delivery.body,
      env: { LINKHOOKS_SECRET: secret },
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/✓ valid/);
  });

  it('--secret still wins over LINKHOOKS_SECRET', async () => {
    const out = await run(['verify', '--secret', secret, '--signature', signature], {
      stdin: delivery.body,
      env: { LINKHOOKS_SECRET: generateSecret() },
    });
    expect(out.code, out.stderr).toBe(0);
  });

  it.each([
    ['trigger', ['trigger', 'click', '--url', 'http://127.0.0.1:9/hooks']],
    ['verify', ['verify', '--signature', signature]],
  ])('%s refuses --secret with --secret-file (exit 2)', async (_label, args) => {
    const out = await run([...args, '--secret', secret, '--secret-file', file('secret', secret)], {
      stdin: delivery.body,
      env: noEnv,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^linkhooks: give --secret or --secret-file, not both/);
  });

  it.each([
    ['a missing file', () => join(dir, 'no-such-secret'), /cannot read .*no-such-secret \(no such file\)/],
    ['a folder', () => dir, /cannot read .* \(it is a folder\)/],
    ['an empty file', () => file('empty-secret', '\n'), /empty-secret is empty/],
    ['standard input', () => '-', /needs a path: standard input is kept for the body/],
  ])('says clearly when --secret-file is %s (exit 2)', async (_label, path, message) => {
    for (const args of [
      ['trigger', 'click', '--url', 'http://127.0.0.1:9/hooks'],
      ['verify', '--signature', signature],
    ]) {
      const out = await run([...args, '--secret-file', path()], { stdin: delivery.body, env: noEnv });
      expect(out.code, args[0]).toBe(2);
      expect(out.stderr).toMatch(/^linkhooks: --secret-file/);
      expect(out.stderr).toMatch(message);
    }
  });

  it('--help says a secret on the command line is visible, and offers the other ways', async () => {
    const out = await run(['--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/other users of this machine can see it/);
    expect(out.stdout).toMatch(/--secret-file <file>/);
    expect(out.stdout).toMatch(/LINKHOOKS_SECRET/);
  });
});

describe('--help', () => {
  it('--help or -h after a command prints the usage and runs nothing', async () => {
    for (const args of [
      ['trigger', '--help'],
      ['trigger', 'click', '--url', 'http://127.0.0.1:9/never', '-h'],
      ['verify', '--help'],
      ['verify', '--scheme', 'standard-webhooks', '-h'],
    ]) {
      const out = await run(args);
      expect(out.code, args.join(' ')).toBe(0);
      expect(out.stdout, args.join(' ')).toMatch(/^linkhooks — try and debug/);
      expect(out.stderr, args.join(' ')).toBe('');
    }
  });
});

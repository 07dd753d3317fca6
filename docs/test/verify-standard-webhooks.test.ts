/**
 * The Standard Webhooks snippets of guide/standard-webhooks.md in each language, run as the page
 * shows them, against the known-answer vector (packages/protocol/vectors/known-answers.json), a
 * delivery signed by the reference `standardwebhooks` library, a rotation, and each refusal: a
 * stale or future timestamp, a forged signature, a re-serialised body, a missing header, a
 * body-only signature. Python and Node always run; Go, Ruby and PHP wherever they are installed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStandardWebhookHeaders, sign, verifyStandardWebhook } from '@linkhooks/protocol';
import { buildEvent, generateSecret } from '@linkhooks/receiver/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { expectUsage, expectVerdict, hasTool, runProgram } from './tools.js';

const example = (file: string) => fileURLToPath(new URL(`../examples/${file}`, import.meta.url));
const vector = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../packages/protocol/vectors/known-answers.json', import.meta.url)),
    'utf8',
  ),
) as {
  secret: string;
  webhook_id: string;
  webhook_timestamp: number;
  body: string;
  webhook_signature: string;
};
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-docs-standard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

const T = vector.webhook_timestamp;
const vectorFile = write('vector.json', vector.body);

// A delivery signed by the reference library, with a multibyte city name, and a rotation's pair.
const secret = generateSecret();
const oldSecret = generateSecret();
const body = JSON.stringify(buildEvent('click', { data: { city: 'Zürich 🏙' } }));
const bodyFile = write('body.json', body);
const alteredFile = write('altered.json', JSON.stringify(JSON.parse(body), null, 1));
const id = 'evt_01JD5XKQ6N8M0B3V2C1X9Z7Y4W';
const signed = (key: string) => new Webhook(key).sign(id, new Date(T * 1000), body);

type Case = [
  label: string,
  file: string,
  secret: string,
  id: string,
  timestamp: string,
  signature: string,
  now: number,
  expected: 'valid' | 'invalid',
];
const ts = String(T);
const cases: Case[] = [
  [
    'the known-answer vector',
    vectorFile,
    vector.secret,
    vector.webhook_id,
    ts,
    vector.webhook_signature,
    T,
    'valid',
  ],
  [
    'the vector 300 s later (the edge of the tolerance)',
    vectorFile,
    vector.secret,
    vector.webhook_id,
    ts,
    vector.webhook_signature,
    T + 300,
    'valid',
  ],
  [
    'the vector 301 s later (stale)',
    vectorFile,
    vector.secret,
    vector.webhook_id,
    ts,
    vector.webhook_signature,
    T + 301,
    'invalid',
  ],
  [
    'the vector 301 s early (from the future)',
    vectorFile,
    vector.secret,
    vector.webhook_id,
    ts,
    vector.webhook_signature,
    T - 301,
    'invalid',
  ],
  [
    'the vector under another webhook-id',
    vectorFile,
    vector.secret,
    'evt_other',
    ts,
    vector.webhook_signature,
    T,
    'invalid',
  ],
  ['a delivery signed by the standardwebhooks library', bodyFile, secret, id, ts, signed(secret), T, 'valid'],
  [
    'a rotation: one entry per secret',
    bodyFile,
    secret,
    id,
    ts,
    `${signed(oldSecret)} ${signed(secret)}`,
    T,
    'valid',
  ],
  ['a signature made with another secret', bodyFile, secret, id, ts, signed(oldSecret), T, 'invalid'],
  ['a re-serialised body', alteredFile, secret, id, ts, signed(secret), T, 'invalid'],
  ['no webhook-id', bodyFile, secret, '', ts, signed(secret), T, 'invalid'],
  ['no webhook-timestamp', bodyFile, secret, id, '', signed(secret), T, 'invalid'],
  [
    'an X-Service-Signature in place of webhook-signature',
    bodyFile,
    secret,
    id,
    ts,
    sign(body, secret),
    T,
    'invalid',
  ],
];

const languages: {
  name: string;
  tool: string;
  versionArg?: string;
  file: string;
  command: (f: string) => string[];
}[] = [
  { name: 'Python', tool: 'python3', file: 'verify_standard_webhooks.py', command: (f) => ['python3', f] },
  {
    name: 'Node',
    tool: 'node',
    file: 'verify-standard-webhooks-node.mjs',
    command: (f) => [process.execPath, f],
  },
  {
    name: 'Go',
    tool: 'go',
    versionArg: 'version',
    file: 'verify_standard_webhooks.go',
    command: (f) => ['go', 'run', f],
  },
  { name: 'Ruby', tool: 'ruby', file: 'verify_standard_webhooks.rb', command: (f) => ['ruby', f] },
  { name: 'PHP', tool: 'php', file: 'verify-standard-webhooks.php', command: (f) => ['php', f] },
];

for (const language of languages) {
  describe(`${language.name}: ${language.file}`, () => {
    const available = hasTool(language.tool, language.versionArg);
    const command = language.command(example(language.file));
    it.runIf(available).each(cases)(
      '%s',
      (_label, file, key, webhookId, timestamp, signature, now, expected) => {
        expectVerdict(
          runProgram(command, [file, key, webhookId, timestamp, signature, String(now)], dir),
          expected,
        );
      },
    );
    it.runIf(available)('says how to run it when an argument is missing, and fails', () => {
      const [, file, key, webhookId, timestamp] = cases[0]!;
      // An unset shell variable for the signature: four arguments instead of five.
      expectUsage(runProgram(command, [file, key, webhookId, timestamp], dir));
    });
  });
}

describe('the reference implementation agrees', () => {
  it('@linkhooks/protocol verifies the vector, and the library signs it the same way', () => {
    const headers = readStandardWebhookHeaders(
      (name) =>
        ({
          'webhook-id': vector.webhook_id,
          'webhook-timestamp': ts,
          'webhook-signature': vector.webhook_signature,
        })[name],
    );
    expect(verifyStandardWebhook(vector.body, headers, vector.secret, { now: T * 1000 })).toMatchObject({
      valid: true,
    });
    expect(new Webhook(vector.secret).sign(vector.webhook_id, new Date(T * 1000), vector.body)).toBe(
      vector.webhook_signature,
    );
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateSecret, isSecretForm, isStandardWebhooksSecret } from './secret.js';
import { sign } from './signature.js';
import {
  readStandardWebhookHeaders,
  signStandardWebhook,
  signStandardWebhookAsync,
  standardWebhookKey,
  verifyStandardWebhook,
  verifyStandardWebhookAsync,
} from './standard-webhooks.js';

const vector = JSON.parse(readFileSync(new URL('../vectors/known-answers.json', import.meta.url), 'utf8'));

function python(script: string, input: object): string {
  return execFileSync('python3', ['-c', script], { input: JSON.stringify(input) })
    .toString()
    .trim();
}

const PY_SIGN = `
import sys, json, hmac, hashlib, base64
v = json.load(sys.stdin)
key = base64.b64decode(v["secret"][len("whsec_"):])
msg = f"{v['id']}.{v['ts']}.{v['body']}".encode()
print("v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode())
`;

const at = (seconds: number) => seconds * 1000;
const headersOf = (id: string, timestamp: number, signature: string) => ({
  id,
  timestamp: String(timestamp),
  signature,
});

describe('known answers', () => {
  it('the vector file agrees with Python for both signatures (the oracle is independent)', () => {
    const pyHex = python(
      'import sys,json,hmac,hashlib; v=json.load(sys.stdin); print(hmac.new(v["secret"].encode(), v["body"].encode(), hashlib.sha256).hexdigest())',
      vector,
    );
    expect(pyHex).toBe(vector.x_service_signature);
    expect(
      python(PY_SIGN, {
        secret: vector.secret,
        id: vector.webhook_id,
        ts: vector.webhook_timestamp,
        body: vector.body,
      }),
    ).toBe(vector.webhook_signature);
    expect(Buffer.from(standardWebhookKey(vector.secret)!).toString('hex')).toBe(vector.key_hex);
  });

  it('sign and signStandardWebhook reproduce the vector; Standard Webhooks publishes this one too', async () => {
    expect(sign(vector.body, vector.secret)).toBe(vector.x_service_signature);
    const input = {
      id: vector.webhook_id,
      timestamp: vector.webhook_timestamp,
      body: vector.body,
      secret: vector.secret,
    };
    expect(signStandardWebhook(input)).toBe(vector.webhook_signature);
    expect(await signStandardWebhookAsync(input)).toBe(vector.webhook_signature);
    // The example of the Standard Webhooks specification.
    expect(
      signStandardWebhook({
        id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        timestamp: 1614265330,
        body: '{"test": 2432232314}',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      }),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('interop with the Standard Webhooks and Svix libraries', () => {
  it('a generated secret, unmodified, verifies our signature in both libraries', () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateSecret();
      expect(isSecretForm(secret)).toBe(true);
      expect(isStandardWebhooksSecret(secret)).toBe(true);
      const body = `{"event":"click","n":${i},"s":"é✓"}`;
      const id = `evt_${i}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = signStandardWebhook({ id, timestamp, body, secret });
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      };
      expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      const svix = { 'svix-id': id, 'svix-timestamp': String(timestamp), 'svix-signature': signature };
      expect(new SvixWebhook(secret).verify(body, svix)).toEqual(JSON.parse(body));
    }
  });

  it("the library's own signature verifies here, with webhook-* and svix-* names", () => {
    const secret = generateSecret();
    const body = '{"event":"conversion"}';
    const now = new Date();
    const signature = new StandardWebhook(secret).sign('msg_1', now, body);
    const seconds = Math.floor(now.getTime() / 1000);
    const get = (h: Record<string, string>) => (name: string) => h[name];
    for (const prefix of ['webhook', 'svix']) {
      const h = {
        [`${prefix}-id`]: 'msg_1',
        [`${prefix}-timestamp`]: String(seconds),
        [`${prefix}-signature`]: signature,
      };
      expect(verifyStandardWebhook(body, readStandardWebhookHeaders(get(h)), secret, { now })).toMatchObject({
        valid: true,
        id: 'msg_1',
        timestamp: seconds,
      });
    }
  });

  it('an earlier base64url secret is refused by the library, and is not of the Standard Webhooks form', () => {
    const legacy = `whsec_-_-_${'A'.repeat(39)}`;
    expect(isSecretForm(legacy)).toBe(true);
    expect(isStandardWebhooksSecret(legacy)).toBe(false);
    expect(() => new StandardWebhook(legacy)).toThrow();
  });
});

describe('verification', () => {
  const secret = vector.secret as string;
  const body = vector.body as string;
  const id = vector.webhook_id as string;
  const ts = vector.webhook_timestamp as number;
  const good = headersOf(id, ts, vector.webhook_signature);

  it('accepts the vector within the tolerance, either side, and refuses just beyond it', async () => {
    for (const skew of [-300, 0, 300]) {
      expect(verifyStandardWebhook(body, good, secret, { now: at(ts + skew) }).valid).toBe(true);
      expect((await verifyStandardWebhookAsync(body, good, secret, { now: at(ts + skew) })).valid).toBe(true);
    }
    expect(verifyStandardWebhook(body, good, secret, { now: at(ts + 301) })).toMatchObject({
      reason: 'timestamp_out_of_tolerance',
      hint: expect.stringContaining('301 s old'),
    });
    expect(verifyStandardWebhook(body, good, secret, { now: at(ts - 301) })).toMatchObject({
      reason: 'timestamp_out_of_tolerance',
      hint: expect.stringContaining('in the future'),
    });
    expect(
      verifyStandardWebhook(body, good, secret, { now: at(ts + 3600), toleranceSeconds: 3600 }).valid,
    ).toBe(true);
  });

  it('refuses every timestamp when the clock or the tolerance is not a number, never lets one through', async () => {
    for (const options of [
      { now: Number.NaN },
      { now: new Date('not a date') },
      { now: at(ts), toleranceSeconds: Number(undefined) },
      { now: at(ts), toleranceSeconds: -1 },
    ]) {
      const refused = {
        valid: false,
        reason: 'timestamp_out_of_tolerance',
        hint: expect.stringContaining('not a number'),
      };
      expect(verifyStandardWebhook(body, good, secret, options as never)).toMatchObject(refused);
      expect(await verifyStandardWebhookAsync(body, good, secret, options as never)).toMatchObject(refused);
    }
  });

  it('bytes, Buffer and ArrayBuffer bodies verify like the string', () => {
    const bytes = new TextEncoder().encode(body);
    for (const b of [bytes, Buffer.from(body), bytes.buffer]) {
      expect(verifyStandardWebhook(b as Uint8Array, good, secret, { now: at(ts) }).valid).toBe(true);
    }
  });

  it('a rotation: any listed secret matches, and the index says which', () => {
    const other = generateSecret();
    const both = signStandardWebhook({ id, timestamp: ts, body, secret: [other, secret] });
    expect(both.split(' ')).toHaveLength(2);
    expect(verifyStandardWebhook(body, headersOf(id, ts, both), [secret], { now: at(ts) })).toMatchObject({
      valid: true,
      secretIndex: 0,
    });
    expect(verifyStandardWebhook(body, good, [other, secret], { now: at(ts) })).toMatchObject({
      valid: true,
      secretIndex: 1,
    });
    expect(verifyStandardWebhook(body, good, [other], { now: at(ts) }).reason).toBe('invalid_signature');
  });

  it.each([
    ['another id', headersOf('evt_other', ts, vector.webhook_signature), 'invalid_signature'],
    ['another timestamp', headersOf(id, ts + 1, vector.webhook_signature), 'invalid_signature'],
    ['no headers at all', { id: undefined, timestamp: undefined, signature: undefined }, 'missing_signature'],
    [
      'only X-Service-Signature (body-only)',
      {
        id: undefined,
        timestamp: undefined,
        signature: undefined,
        serviceSignature: vector.x_service_signature,
      },
      'body_only_signature',
    ],
    ['no signature', { ...good, signature: undefined }, 'missing_signature'],
    ['no id', { ...good, id: null }, 'missing_webhook_id'],
    ['no timestamp', { ...good, timestamp: '' }, 'missing_timestamp'],
    ['a repeated id header', { ...good, id: [id, id] }, 'malformed_webhook_id'],
    ['an ISO timestamp', { ...good, timestamp: '2026-11-24T08:00:00Z' }, 'malformed_timestamp'],
    ['a fractional timestamp', { ...good, timestamp: `${ts}.5` }, 'malformed_timestamp'],
    [
      'a v2 signature only',
      { ...good, signature: vector.webhook_signature.replace('v1,', 'v2,') },
      'malformed_signature',
    ],
    [
      'a truncated signature',
      { ...good, signature: vector.webhook_signature.slice(0, 20) },
      'malformed_signature',
    ],
    ['a 10 kB signature header', { ...good, signature: 'v1,'.repeat(4000) }, 'malformed_signature'],
  ])('%s → %s', (_, headers, reason) => {
    const result = verifyStandardWebhook(body, headers as never, secret, { now: at(ts) });
    expect(result).toMatchObject({ valid: false, reason });
  });

  it('other versions beside a good v1 are ignored, and a body changed by one byte fails', () => {
    const mixed = headersOf(id, ts, `v1a,AAAA ${vector.webhook_signature} v2,zzz`);
    expect(verifyStandardWebhook(body, mixed, secret, { now: at(ts) }).valid).toBe(true);
    expect(
      verifyStandardWebhook(body.replace('clk_01', 'clk_02'), good, secret, { now: at(ts) }).reason,
    ).toBe('invalid_signature');
  });

  it('refuses unusable secrets and parsed bodies without throwing', () => {
    expect(verifyStandardWebhook(body, good, 'whsec_***', { now: at(ts) }).reason).toBe('invalid_secret');
    expect(verifyStandardWebhook(body, good, [], { now: at(ts) }).reason).toBe('invalid_secret');
    // "null" decodes as base64; an unset variable's text is refused all the same.
    expect(verifyStandardWebhook(body, good, 'null', { now: at(ts) }).reason).toBe('invalid_secret');
    expect(verifyStandardWebhook(JSON.parse(body), good, secret, { now: at(ts) }).reason).toBe(
      'body_already_parsed',
    );
  });

  it('signing refuses bad input with a TypeError', () => {
    expect(() => signStandardWebhook({ id: '', timestamp: ts, body, secret })).toThrow(TypeError);
    expect(() => signStandardWebhook({ id, timestamp: 1.5, body, secret })).toThrow(TypeError);
    expect(() => signStandardWebhook({ id, timestamp: ts, body, secret: 'whsec_***' })).toThrow(TypeError);
    expect(() => signStandardWebhook({ id, timestamp: ts, body: {} as never, secret })).toThrow(TypeError);
  });
});

describe('Web Crypto path (no node:crypto) agrees with the vector', () => {
  let web: typeof import('./standard-webhooks.js');

  beforeAll(async () => {
    const descriptor = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    vi.resetModules();
    Object.defineProperty(process, 'getBuiltinModule', {
      value: undefined,
      configurable: true,
      writable: true,
    });
    try {
      web = await import('./standard-webhooks.js');
    } finally {
      if (descriptor) Object.defineProperty(process, 'getBuiltinModule', descriptor);
      else delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
    }
  });

  afterAll(() => {
    vi.resetModules();
  });

  it('signs and verifies with byte keys, and the sync forms say to use the async ones', async () => {
    const input = {
      id: vector.webhook_id,
      timestamp: vector.webhook_timestamp,
      body: vector.body,
      secret: vector.secret,
    };
    expect(web.signStandardWebhook).not.toBe(signStandardWebhook);
    expect(await web.signStandardWebhookAsync(input)).toBe(vector.webhook_signature);
    expect(
      await web.signStandardWebhookAsync({ ...input, body: new TextEncoder().encode(vector.body) }),
    ).toBe(vector.webhook_signature);
    const headers = headersOf(vector.webhook_id, vector.webhook_timestamp, vector.webhook_signature);
    const now = at(vector.webhook_timestamp);
    expect((await web.verifyStandardWebhookAsync(vector.body, headers, vector.secret, { now })).valid).toBe(
      true,
    );
    expect(() => web.signStandardWebhook(input)).toThrow(/signStandardWebhookAsync/);
    expect(web.verifyStandardWebhook(vector.body, headers, vector.secret, { now }).reason).toBe(
      'crypto_unavailable',
    );
  });
});

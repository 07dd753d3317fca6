import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hasSyncCrypto } from './hmac.js';
import { unusableSecret } from './secret.js';
import { sign, signAsync, type VerifyResult, verifySignature, verifySignatureAsync } from './signature.js';

// Any string a secret may be (unusableSecret refuses blank ones and an unset variable's text).
const secretArb = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 80 })
  .filter((s) => unusableSecret(s) === null);

// GitHub's published example for X-Hub-Signature-256 (the digest, without its `sha256=` prefix).
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_BODY = 'Hello, World!';
const GITHUB_DIGEST = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0123456789a';
const OTHER_SECRET = 'whsec_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz';
const BODY = '{"event":"click","timestamp":"2026-11-22T10:04:05Z","data":{"click_id":"c_1","link_id":7}}';

/** The oracle for property tests: node:crypto called directly on explicit UTF-8 bytes. */
function nodeHmacHex(secret: string, body: string | Uint8Array): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(bytes).digest('hex');
}

type Case = { name: string; secret: string; body: string | Uint8Array };

/**
 * Digests from an independent implementation: Python's `hmac` module, doing exactly what
 * design R9 tells a receiver in any language to do:
 * `hmac.new(secret.encode(), body, sha256).hexdigest()`. The secret travels as a JSON string on
 * stdin (read as UTF-8 bytes, so no locale can mangle it) and the body as hex.
 */
function pythonHmacHex(cases: readonly Case[]): string[] {
  const script = [
    'import hashlib, hmac, json, sys',
    'cases = json.loads(sys.stdin.buffer.read().decode("utf-8"))',
    'for c in cases:',
    '    print(hmac.new(c["secret"].encode("utf-8"), bytes.fromhex(c["body"]), hashlib.sha256).hexdigest())',
  ].join('\n');
  const input = JSON.stringify(
    cases.map((c) => ({
      secret: c.secret,
      body: (typeof c.body === 'string' ? Buffer.from(c.body, 'utf8') : Buffer.from(c.body)).toString('hex'),
    })),
  );
  const out = execFileSync('python3', ['-c', script], { input, encoding: 'utf8' });
  return out.trim().split('\n');
}

const MULTIBYTE_BODY = '{"name":"Olá, café crème — 你好，世界 🎉👩‍💻 Ωmega"}';
const INVALID_UTF8 = new Uint8Array([0xff, 0xfe, 0xc3, 0x28]);

const CASES: Case[] = [
  { name: "GitHub's published example", secret: GITHUB_SECRET, body: GITHUB_BODY },
  { name: 'empty body', secret: SECRET, body: '' },
  { name: 'empty body as bytes', secret: SECRET, body: new Uint8Array(0) },
  { name: 'multibyte UTF-8 body as a string', secret: SECRET, body: MULTIBYTE_BODY },
  { name: 'multibyte UTF-8 body as bytes', secret: SECRET, body: new TextEncoder().encode(MULTIBYTE_BODY) },
  { name: 'invalid UTF-8 bytes', secret: SECRET, body: INVALID_UTF8 },
  { name: 'compact JSON envelope', secret: SECRET, body: BODY },
  { name: 'non-ASCII secret', secret: 'clé-秘密-🔑', body: BODY },
];

let python: string[] = [];

beforeAll(() => {
  python = pythonHmacHex(CASES);
});

function expectValid(result: VerifyResult, secretIndex = 0): void {
  expect(result).toEqual({ valid: true, reason: null, secretIndex });
}

function expectReason(result: VerifyResult, reason: string): void {
  expect(result.valid).toBe(false);
  expect(result.reason).toBe(reason);
  if (!result.valid) expect(result.hint).toEqual(expect.any(String));
}

describe('known answers', () => {
  it("sign() reproduces GitHub's published digest", async () => {
    expect(sign(GITHUB_BODY, GITHUB_SECRET)).toBe(GITHUB_DIGEST);
    expect(await signAsync(GITHUB_BODY, GITHUB_SECRET)).toBe(GITHUB_DIGEST);
    expectValid(verifySignature(GITHUB_BODY, GITHUB_DIGEST, GITHUB_SECRET));
    expectValid(await verifySignatureAsync(GITHUB_BODY, GITHUB_DIGEST, GITHUB_SECRET));
  });

  it('python agrees with the published digest (the oracle itself is right)', () => {
    expect(python[0]).toBe(GITHUB_DIGEST);
    expect(python).toHaveLength(CASES.length);
    for (const digest of python) expect(digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('string and byte forms of the same body give the same digest; distinct bodies differ', () => {
    expect(python[1]).toBe(python[2]);
    expect(python[3]).toBe(python[4]);
    expect(new Set(python).size).toBe(CASES.length - 2);
  });

  describe.each(CASES.map((c, i) => ({ ...c, i })))('$name', ({ secret, body, i }) => {
    it('sign and signAsync equal Python hmac', async () => {
      const expected = python[i]!;
      expect(sign(body, secret)).toBe(expected);
      expect(await signAsync(body, secret)).toBe(expected);
    });

    it('verifySignature and verifySignatureAsync accept the Python digest, in either case', async () => {
      const expected = python[i]!;
      expectValid(verifySignature(body, expected, secret));
      expectValid(await verifySignatureAsync(body, expected, secret));
      expectValid(verifySignature(body, expected.toUpperCase(), secret));
      expectValid(await verifySignatureAsync(body, expected.toUpperCase(), secret));
    });

    it('Buffer and ArrayBuffer forms of the body verify too', async () => {
      const expected = python[i]!;
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
      const arrayBuffer = new Uint8Array(bytes).buffer;
      expect(sign(bytes, secret)).toBe(expected);
      expect(sign(arrayBuffer, secret)).toBe(expected);
      expectValid(verifySignature(bytes, expected, secret));
      expectValid(verifySignature(arrayBuffer, expected, secret));
      expectValid(await verifySignatureAsync(arrayBuffer, expected, secret));
    });
  });

  it('verifies a Uint8Array view with a non-zero offset over only its own bytes', async () => {
    const backing = new Uint8Array(64).fill(0x41);
    const payload = new TextEncoder().encode(BODY);
    const big = new Uint8Array(backing.length + payload.length + 16);
    big.set(payload, backing.length);
    const view = big.subarray(backing.length, backing.length + payload.length);
    expect(view.byteOffset).toBe(64);
    const expected = nodeHmacHex(SECRET, payload);
    expect(sign(view, SECRET)).toBe(expected);
    expectValid(verifySignature(view, expected, SECRET));
    expectValid(await verifySignatureAsync(view, expected, SECRET));
  });

  it('invalid UTF-8 decoded to a string no longer verifies, and the hint says why', () => {
    const expected = python[5]!;
    const decoded = new TextDecoder().decode(INVALID_UTF8);
    expect(decoded).toContain('\uFFFD');
    const result = verifySignature(decoded, expected, SECRET);
    expectReason(result, 'invalid_signature');
    if (!result.valid) expect(result.hint).toMatch(/U\+FFFD/);
  });
});

describe('Web Crypto path agrees with node:crypto', () => {
  type SignatureModule = typeof import('./signature.js');
  type HmacModule = typeof import('./hmac.js');
  let web: SignatureModule;
  let webHmac: HmacModule;

  beforeAll(async () => {
    const descriptor = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    vi.resetModules();
    Object.defineProperty(process, 'getBuiltinModule', {
      value: undefined,
      configurable: true,
      writable: true,
    });
    try {
      webHmac = await import('./hmac.js');
      web = await import('./signature.js');
    } finally {
      if (descriptor) Object.defineProperty(process, 'getBuiltinModule', descriptor);
      else delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
    }
  });

  afterAll(() => {
    vi.resetModules();
  });

  it('loads a separate copy without node:crypto, and restores process.getBuiltinModule', () => {
    expect(hasSyncCrypto).toBe(true);
    expect(webHmac.hasSyncCrypto).toBe(false);
    expect(webHmac.hmacSha256Sync).toBeUndefined();
    expect(webHmac.hmacSha256HexSync).toBeUndefined();
    expect(web.sign).not.toBe(sign);
    expect(typeof process.getBuiltinModule).toBe('function');
  });

  it('signAsync equals node sign and Python for every known-answer case', async () => {
    for (const [i, c] of CASES.entries()) {
      const digest = await web.signAsync(c.body, c.secret);
      expect(digest).toBe(sign(c.body, c.secret));
      expect(digest).toBe(python[i]);
    }
  });

  it('sync sign throws, sync verify answers crypto_unavailable without throwing', () => {
    expect(() => web.sign(BODY, SECRET)).toThrow(/signAsync/);
    const result = web.verifySignature(BODY, sign(BODY, SECRET), SECRET);
    expectReason(result, 'crypto_unavailable');
    if (!result.valid) expect(result.hint).toMatch(/verifySignatureAsync/);
    // Input problems are still reported as such before the runtime is considered.
    expectReason(web.verifySignature(BODY, undefined, SECRET), 'missing_signature');
  });

  it('verifySignatureAsync verifies, rejects and rotates like the node path', async () => {
    const good = sign(BODY, SECRET);
    expectValid(await web.verifySignatureAsync(BODY, good, SECRET));
    expectValid(await web.verifySignatureAsync(BODY, good.toUpperCase(), SECRET));
    expectValid(await web.verifySignatureAsync(BODY, good, [OTHER_SECRET, SECRET]), 1);
    expectReason(await web.verifySignatureAsync(BODY, good, OTHER_SECRET), 'invalid_signature');
    expectReason(await web.verifySignatureAsync(BODY, `sha256=${good}`, SECRET), 'malformed_signature');
    const view = new TextEncoder().encode(`xx${BODY}yy`).subarray(2, 2 + BODY.length);
    expectValid(await web.verifySignatureAsync(view, good, SECRET));
    expectValid(await web.verifySignatureAsync(INVALID_UTF8.slice().buffer, python[5]!, SECRET));
  });

  it('the imported-key cache never hands back another secret’s key', async () => {
    const secrets = Array.from({ length: 20 }, (_, i) => `whsec_rotation_${i}`);
    for (const s of secrets) expect(await web.signAsync(BODY, s)).toBe(nodeHmacHex(s, BODY));
    // The first keys have been evicted by now; signing with them again must still be right.
    for (const s of secrets) expect(await web.signAsync(BODY, s)).toBe(nodeHmacHex(s, BODY));
  });

  it('constantTimeEqual and sha256 fall back correctly', async () => {
    const a = new Uint8Array([1, 2, 3, 4]);
    expect(webHmac.constantTimeEqual(a, new Uint8Array([1, 2, 3, 4]))).toBe(true);
    expect(webHmac.constantTimeEqual(a, new Uint8Array([1, 2, 3, 5]))).toBe(false);
    expect(webHmac.constantTimeEqual(a, new Uint8Array([1, 2, 3]))).toBe(false);
    expect(Buffer.from(await webHmac.sha256('abc')).toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('agrees with node:crypto on random bodies and secrets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 })),
        secretArb,
        async (body, secret) => {
          const digest = await web.signAsync(body, secret);
          expect(digest).toBe(nodeHmacHex(secret, body));
          expectValid(await web.verifySignatureAsync(body, digest, secret));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('hostile signature headers never throw and are refused with the right reason', () => {
  const good = () => sign(BODY, SECRET);

  async function both(signature: unknown): Promise<VerifyResult> {
    let sync: VerifyResult | undefined;
    expect(() => {
      sync = verifySignature(BODY, signature as never, SECRET);
    }).not.toThrow();
    const async = await verifySignatureAsync(BODY, signature as never, SECRET);
    expect(async).toEqual(sync);
    return sync!;
  }

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['empty string', ''],
  ])('missing: %s', async (_, value) => {
    const result = await both(value);
    expectReason(result, 'missing_signature');
    if (!result.valid) expect(result.hint).toMatch(/X-Service-Signature/);
  });

  const malformedStrings: Array<[string, () => string]> = [
    ['odd length (63 hex)', () => good().slice(0, 63)],
    ['65 hex', () => good() + 'a'],
    ['62 hex', () => good().slice(0, 62)],
    ['66 hex', () => good() + 'ab'],
    ['non-hex chars', () => 'g'.repeat(64)],
    ['one non-hex char in a valid signature', () => good().slice(0, 10) + 'z' + good().slice(11)],
    ['64 chars including é', () => good().slice(0, 63) + 'é'],
    ['64 UTF-16 units including an emoji', () => good().slice(0, 62) + '😀'],
    ['lone surrogate', () => good().slice(0, 63) + '\uD800'],
    ['NUL byte', () => good().slice(0, 63) + '\0'],
    ['whitespace only', () => '   '],
    ['internal space', () => good().slice(0, 32) + ' ' + good().slice(32)],
    ['hex of the 32 bytes as base64', () => Buffer.from(good(), 'hex').toString('base64')],
    ['0x prefix', () => '0x' + good()],
    ['comma-joined duplicate headers', () => `${good()}, ${good()}`],
  ];

  it.each(malformedStrings)('malformed: %s', async (_, make) => {
    expectReason(await both(make()), 'malformed_signature');
  });

  it('a 10 MB header is refused without being scanned', async () => {
    const huge = 'a'.repeat(10 * 1024 * 1024);
    const start = performance.now();
    const result = verifySignature(BODY, huge, SECRET);
    const elapsed = performance.now() - start;
    expectReason(result, 'malformed_signature');
    expect(elapsed).toBeLessThan(50);
    const startAsync = performance.now();
    expectReason(await verifySignatureAsync(BODY, huge, SECRET), 'malformed_signature');
    expect(performance.now() - startAsync).toBeLessThan(50);
  });

  it('a 10 MB header of whitespace around a valid signature is refused too (bounded before trim)', async () => {
    const padded = ' '.repeat(5 * 1024 * 1024) + good() + ' '.repeat(5 * 1024 * 1024);
    const start = performance.now();
    expectReason(await both(padded), 'malformed_signature');
    expect(performance.now() - start).toBeLessThan(50);
  });

  it.each([
    ['zero', 0],
    ['number', 123],
    ['NaN', Number.NaN],
    ['bigint', 10n],
    ['true', true],
    ['false', false],
    ['plain object', { signature: 'abc' }],
    ['object with toString returning the signature', { toString: () => sign(BODY, SECRET) }],
    ['empty array', []],
    ['Symbol', Symbol('sig')],
    ['function', () => sign(BODY, SECRET)],
    ['boxed String', new String('abc')],
    ['Uint8Array of the digest', new Uint8Array(32)],
    ['Date', new Date(0)],
  ])('non-string value: %s', async (_, value) => {
    expectReason(await both(value), 'malformed_signature');
  });

  it('arrays of strings (repeated headers) are refused, even when every entry is valid', async () => {
    expectReason(await both([good()]), 'malformed_signature');
    expectReason(await both([good(), good()]), 'malformed_signature');
    expectReason(await both(['nope', good()]), 'malformed_signature');
  });

  it('uppercase and mixed-case hex are accepted', async () => {
    expectValid(await both(good().toUpperCase()));
    const mixed = [...good()].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    expectValid(await both(mixed));
  });

  it('a sha256= prefix is refused as malformed with a hint about the prefix', async () => {
    for (const prefixed of [`sha256=${good()}`, `SHA256=${good()}`, ` sha256=${good()} `]) {
      const result = await both(prefixed);
      expectReason(result, 'malformed_signature');
      if (!result.valid) expect(result.hint).toMatch(/sha256=.*prefix/);
    }
  });

  it('leading and trailing whitespace around a valid signature is accepted', async () => {
    expectValid(await both(` ${good()} `));
    expectValid(await both(`\t${good()}\r\n`));
  });
});

describe('secrets', () => {
  const sig = sign(BODY, SECRET);

  it('a wrong secret gives invalid_signature', async () => {
    expectReason(verifySignature(BODY, sig, OTHER_SECRET), 'invalid_signature');
    expectReason(await verifySignatureAsync(BODY, sig, OTHER_SECRET), 'invalid_signature');
  });

  it('a wrong body gives invalid_signature', async () => {
    expectReason(verifySignature(`${BODY} `, sig, SECRET), 'invalid_signature');
    expectReason(await verifySignatureAsync(BODY.replace('c_1', 'c_2'), sig, SECRET), 'invalid_signature');
  });

  it('rotation: the index of the matching secret is reported', async () => {
    expectValid(verifySignature(BODY, sig, [OTHER_SECRET, SECRET]), 1);
    expectValid(await verifySignatureAsync(BODY, sig, [OTHER_SECRET, SECRET]), 1);
    expectValid(verifySignature(BODY, sig, [SECRET, OTHER_SECRET]), 0);
    expectValid(verifySignature(BODY, sig, [SECRET, SECRET]), 0);
    expectValid(verifySignature(BODY, sig, [SECRET]), 0);
    expectReason(verifySignature(BODY, sig, [OTHER_SECRET, `${SECRET}x`]), 'invalid_signature');
  });

  it.each([
    ['empty string', ''],
    ['empty array', []],
    ['array holding an empty string', [SECRET, '']],
    ['number', 42],
    ['null', null],
    ['undefined', undefined],
    ['object', { secret: SECRET }],
    ['array holding a number', [SECRET, 1]],
    ['Uint8Array', new TextEncoder().encode(SECRET)],
    ['blank', '  '],
    ['the text an unset variable becomes', 'undefined'],
    ['the text null', 'null'],
    ['array holding the text undefined', [SECRET, 'undefined']],
  ])('invalid_secret: %s', async (_, secret) => {
    expect(() => verifySignature(BODY, sig, secret as never)).not.toThrow();
    expectReason(verifySignature(BODY, sig, secret as never), 'invalid_secret');
    expectReason(await verifySignatureAsync(BODY, sig, secret as never), 'invalid_secret');
  });

  it('sign refuses an empty or non-string secret', async () => {
    expect(() => sign(BODY, '')).toThrow(TypeError);
    expect(() => sign(BODY, `${undefined}`)).toThrow(/"undefined": the variable it was read from is not set/);
    expect(() => sign(BODY, 1 as never)).toThrow(TypeError);
    await expect(signAsync(BODY, '')).rejects.toThrow(TypeError);
  });
});

describe('bodies', () => {
  const sig = sign(BODY, SECRET);

  it.each([
    ['parsed object', JSON.parse(BODY)],
    ['array', [1, 2]],
  ])('body_already_parsed: %s', async (_, body) => {
    const result = verifySignature(body as never, sig, SECRET);
    expectReason(result, 'body_already_parsed');
    if (!result.valid) expect(result.hint).toMatch(/raw/);
    expectReason(await verifySignatureAsync(body as never, sig, SECRET), 'body_already_parsed');
  });

  it.each([
    ['number', 42],
    ['null', null],
    ['undefined', undefined],
    ['boolean', true],
  ])('invalid_body: %s', async (_, body) => {
    expectReason(verifySignature(body as never, sig, SECRET), 'invalid_body');
    expectReason(await verifySignatureAsync(body as never, sig, SECRET), 'invalid_body');
  });

  it('an ArrayBuffer body verifies', async () => {
    const buffer = new TextEncoder().encode(BODY).buffer;
    expect(buffer).toBeInstanceOf(ArrayBuffer);
    expectValid(verifySignature(buffer, sig, SECRET));
    expectValid(await verifySignatureAsync(buffer, sig, SECRET));
  });

  it('sign refuses a parsed body', () => {
    expect(() => sign(JSON.parse(BODY), SECRET)).toThrow(TypeError);
    expect(() => sign(42 as never, SECRET)).toThrow(TypeError);
  });
});

describe('hints on a mismatch', () => {
  const sig = sign(BODY, SECRET);

  function hintOf(result: VerifyResult): string {
    expect(result.valid).toBe(false);
    expect(result.reason).toBe('invalid_signature');
    return result.valid ? '' : result.hint;
  }

  it('a secret with surrounding whitespace', () => {
    expect(hintOf(verifySignature(BODY, sig, `${SECRET}\n`))).toMatch(/whitespace/);
    expect(hintOf(verifySignature(BODY, sig, ` ${SECRET}`))).toMatch(/whitespace/);
  });

  it('a secret that is not a whsec_ secret', () => {
    expect(hintOf(verifySignature(BODY, sig, 'my-api-key'))).toMatch(/whsec_/);
  });

  it('a pretty-printed (re-serialised) body', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    const hint = hintOf(verifySignature(pretty, sig, SECRET));
    expect(hint).toMatch(/re-formatted/);
    expect(hint).toMatch(/raw/);
    expect(hintOf(verifySignature(Buffer.from(pretty), sig, SECRET))).toMatch(/re-formatted/);
  });

  it('a plain mismatch gets the generic hint', () => {
    expect(hintOf(verifySignature(BODY, sig, OTHER_SECRET))).toMatch(/does not match/);
  });
});

describe('properties', () => {
  const bodyArb = fc.oneof(
    fc.uint8Array({ maxLength: 512 }),
    fc.string({ unit: 'binary', maxLength: 256 }),
    fc.string({ unit: 'grapheme', maxLength: 64 }),
    // UTF-16 code units, lone surrogates included: they are encoded as U+FFFD on every path.
    fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)), maxLength: 64 }),
  );
  const hexChars = [...'0123456789abcdefABCDEF'];
  const REAL = Symbol('real signature');
  const signatureArb = fc.oneof(
    { arbitrary: fc.constant(REAL), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 130 }), weight: 1 },
    { arbitrary: fc.string({ unit: fc.constantFrom(...hexChars), maxLength: 130 }), weight: 2 },
    { arbitrary: fc.array(fc.string({ unit: fc.constantFrom(...hexChars), maxLength: 130 })), weight: 1 },
    { arbitrary: fc.anything(), weight: 1 },
  );

  it('verifySignature never throws and is valid iff the signature is the real HMAC (any case)', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        fc.array(secretArb, { minLength: 1, maxLength: 3 }),
        signatureArb,
        fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
        async (body, secrets, candidate, upper) => {
          const real = nodeHmacHex(secrets[0]!, body);
          const signature =
            candidate === REAL
              ? [...real].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')
              : candidate;
          const digests = secrets.map((s) => nodeHmacHex(s, body));
          const expectedIndex =
            typeof signature === 'string' ? digests.indexOf(signature.trim().toLowerCase()) : -1;

          let result: VerifyResult | undefined;
          expect(() => {
            result = verifySignature(body, signature as never, secrets);
          }).not.toThrow();
          const asyncResult = await verifySignatureAsync(body, signature as never, secrets);
          expect(asyncResult).toEqual(result);

          if (expectedIndex >= 0) {
            expectValid(result!, expectedIndex);
          } else {
            expect(result!.valid).toBe(false);
            expect(result!.reason).toMatch(/^(missing|malformed|invalid)_signature$/);
          }
          if (candidate === REAL) expectValid(result!, 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('hostile bodies and secrets never throw either', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (body, signature, secret) => {
        const result = verifySignature(body as never, signature as never, secret as never);
        expect(result.valid).toBe(false);
        expect(typeof result.reason).toBe('string');
      }),
      { numRuns: 300 },
    );
  });

  it('sign → verify round-trips (sync and async)', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, secretArb, async (body, secret) => {
        const signature = sign(body, secret);
        expect(signature).toMatch(/^[0-9a-f]{64}$/);
        expect(signature).toBe(nodeHmacHex(secret, body));
        expect(await signAsync(body, secret)).toBe(signature);
        expectValid(verifySignature(body, signature, secret));
        expectValid(await verifySignatureAsync(body, signature, secret));
      }),
      { numRuns: 200 },
    );
  });

  it('flipping any single hex digit of a valid signature makes it invalid', () => {
    fc.assert(
      fc.property(
        bodyArb,
        secretArb,
        fc.nat(63),
        fc.integer({ min: 1, max: 15 }),
        (body, secret, position, delta) => {
          const signature = sign(body, secret);
          const digit = Number.parseInt(signature[position]!, 16);
          const flipped =
            signature.slice(0, position) +
            ((digit + delta) % 16).toString(16) +
            signature.slice(position + 1);
          expect(flipped).not.toBe(signature);
          expect(flipped).toHaveLength(64);
          expectReason(verifySignature(body, flipped, secret), 'invalid_signature');
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * The `/fetch` adapter and the async verification API where `node:crypto` does not exist.
 *
 * The built ESM entries (`dist/adapters/fetch.js`, `dist/index.js`, with `@linkhooks/protocol` and
 * zod) are bundled for the browser and run inside an `EdgeVM` (Vercel's edge runtime: Web APIs,
 * no `process`, no `require`), so every digest there comes from Web Crypto. Requests are built
 * inside the VM; signatures are computed out here with Node's own HMAC, an independent check of
 * the wire contract (design R9: lowercase hex HMAC-SHA256 of the raw bytes, keyed by the secret).
 */
import { createHash, createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { EdgeVM } from '@edge-runtime/vm';
import { buildEvent, generateSecret } from '@linkhooks/receiver/testing';
import { build, type Metafile } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const receiverDir = fileURLToPath(new URL('..', import.meta.url));
/** The Standard Webhooks handler's injected clock, in Unix seconds. */
const STANDARD_NOW_S = 1_795_507_200;

// Resolved through the package's own `exports` (the `import` condition): the built ESM files.
const ENTRY = `
export { webhookHandler } from '@linkhooks/receiver/fetch';
export {
  constructEvent,
  constructEventAsync,
  createMemoryStore,
  isWebhookError,
  verifySignature,
  verifySignatureAsync,
  WebhookError,
} from '@linkhooks/receiver';
export { signedDeliveryAsync } from '@linkhooks/receiver/testing';
export { hasSyncCrypto } from '@linkhooks/protocol';
`;

/** Runs inside the VM: four handlers (plain, idempotent, debugging with exposeHints, Standard Webhooks) whose event handlers record what they saw. */
const harness = (secrets: string[]) => `
(() => {
  const lh = globalThis.__linkhooks;
  const SECRETS = ${JSON.stringify(secrets)};
  const seen = [];
  const errors = [];
  const record = (name) => (event, ctx) => {
    seen.push({
      name,
      event: event.event,
      id: event.data.conversion_id ?? event.data.click_id ?? event.data.link_id ?? null,
      secretIndex: ctx.secretIndex,
      attempt: ctx.attempt ?? null,
      idempotencyKey: ctx.idempotencyKey ?? null,
    });
    if (event.data.click_id === 'clk_throws') throw new Error('database down');
  };
  const on = {
    click: record('click'),
    conversion: record('conversion'),
    'link.deleted': record('link.deleted'),
    unknown: record('unknown'),
  };
  const onError = (e) => errors.push({ code: e.code, cause: e.cause ? e.cause.message : null });
  const handlers = {
    plain: lh.webhookHandler({ secret: SECRETS, on, onError, maxBodyBytes: 4096 }),
    idempotent: lh.webhookHandler({ secret: SECRETS[0], on, idempotency: { store: lh.createMemoryStore() } }),
    debugging: lh.webhookHandler({ secret: SECRETS, on, onError, exposeHints: true }),
    standard: lh.webhookHandler({
      secret: SECRETS,
      scheme: 'standard-webhooks',
      clock: { now: () => ${STANDARD_NOW_S} * 1000 },
      idempotency: { store: lh.createMemoryStore() },
      on,
      onError,
    }),
  };
  globalThis.__deliver = async (which, json) => {
    const init = JSON.parse(json);
    const body = init.bytes ? new Uint8Array(init.bytes) : init.body;
    const request = new Request('https://receiver.example/webhooks', {
      method: init.method ?? 'POST',
      headers: init.headers ?? {},
      body,
    });
    const response = await handlers[which](request);
    return JSON.stringify({
      status: response.status,
      contentType: response.headers.get('content-type'),
      allow: response.headers.get('allow'),
      isWebResponse: response instanceof Response,
      text: await response.text(),
    });
  };
  globalThis.__drain = () => JSON.stringify({ seen: seen.splice(0), errors: errors.splice(0) });
})();
`;

interface Answer {
  status: number;
  contentType: string | null;
  allow: string | null;
  isWebResponse: boolean;
  json: {
    received?: boolean;
    duplicate?: boolean;
    code?: string;
    error?: { code: string; message: string; hint?: string };
  };
}
interface Seen {
  name: string;
  event: string;
  id: string | number | null;
  secretIndex: number;
  attempt: number | null;
  idempotencyKey: string | null;
}

const hmacHex = (body: string | Uint8Array, secret: string) =>
  createHmac('sha256', secret).update(body).digest('hex');

describe('the fetch adapter on an edge runtime without node:crypto', () => {
  const secret = generateSecret();
  const oldSecret = generateSecret();
  let vm: EdgeVM;
  let bundle: string;
  let metafile: Metafile;

  beforeAll(async () => {
    const result = await build({
      stdin: { contents: ENTRY, resolveDir: receiverDir, sourcefile: 'edge-entry.js', loader: 'js' },
      absWorkingDir: receiverDir,
      bundle: true,
      // 'browser': an import of a Node built-in would fail the build instead of being left external.
      platform: 'browser',
      format: 'iife',
      globalName: '__linkhooks',
      target: 'es2022',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    bundle = result.outputFiles[0]!.text;
    metafile = result.metafile;
    vm = new EdgeVM();
    vm.evaluate(bundle);
    vm.evaluate(harness([secret, oldSecret]));
  });

  async function deliver(
    which: 'plain' | 'idempotent' | 'debugging' | 'standard',
    init: { method?: string; headers?: Record<string, string>; body?: string; bytes?: number[] },
  ): Promise<Answer> {
    const raw: string = await vm.context.__deliver(which, JSON.stringify(init));
    const { text, ...rest } = JSON.parse(raw) as Omit<Answer, 'json'> & { text: string };
    return { ...rest, json: text ? JSON.parse(text) : {} };
  }
  const drain = (): { seen: Seen[]; errors: { code: string; cause: string | null }[] } =>
    JSON.parse(vm.context.__drain());
  const signed = (body: string | Uint8Array, key = secret) => ({
    'content-type': 'application/json',
    'x-service-signature': hmacHex(body, key),
  });

  afterEach(() => {
    drain();
  });

  it('bundles the built ESM entries and zod, with no Node built-in imported', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toEqual(
      expect.arrayContaining(['dist/adapters/fetch.js', 'dist/index.js', '../protocol/dist/index.js']),
    );
    expect(inputs.some((p) => p.includes('/zod/'))).toBe(true);
    expect(inputs.filter((p) => !p.includes('node_modules/') && /(^|\/)src\//.test(p))).toEqual([]);
    const external = Object.values(metafile.inputs).flatMap((i) => i.imports.filter((m) => m.external));
    expect(external).toEqual([]);
    expect(bundle).not.toMatch(/\b(?:from|import|require)\s*\(?\s*["']node:/);
    // The one mention left is the runtime probe `process.getBuiltinModule?.('node:crypto')`.
    const withoutProbe = bundle.replace(/getBuiltinModule\?\.\(\s*["']node:crypto["']\s*\)/g, '');
    expect(withoutProbe).not.toBe(bundle);
    expect(withoutProbe).not.toMatch(/["']node:crypto["']/);
  });

  it('runs where node:crypto is unreachable, so verification really takes the Web Crypto path', async () => {
    const probe = JSON.parse(
      vm.evaluate(`JSON.stringify({
        process: typeof process,
        getBuiltinModule: typeof globalThis.process?.getBuiltinModule,
        require: typeof require,
        buffer: typeof Buffer,
        requireCrypto: (() => { try { require('node:crypto'); return 'loaded'; } catch (e) { return e.name; } })(),
        subtleSign: typeof crypto.subtle.sign,
        edgeRuntime: typeof EdgeRuntime,
        hasSyncCrypto: __linkhooks.hasSyncCrypto,
      })`),
    );
    expect(probe).toEqual({
      process: 'undefined',
      getBuiltinModule: 'undefined',
      require: 'undefined',
      buffer: 'undefined',
      requireCrypto: 'ReferenceError',
      subtleSign: 'function',
      edgeRuntime: 'string',
      hasSyncCrypto: false,
    });
    const dynamicImport = await vm.evaluate<Promise<string>>(
      `import('node:crypto').then(() => 'loaded', () => 'unavailable')`,
    );
    expect(dynamicImport).toBe('unavailable');
  });

  it('verifies a signed click built in the VM, runs its handler and answers 200', async () => {
    const event = buildEvent('click');
    const body = JSON.stringify(event);
    const answer = await deliver('plain', { body, headers: { ...signed(body), 'x-service-attempt': '2' } });
    expect(answer).toMatchObject({
      status: 200,
      contentType: expect.stringMatching(/^application\/json/),
      isWebResponse: true,
      json: { received: true },
    });
    expect(drain().seen).toEqual([
      {
        name: 'click',
        event: 'click',
        id: event.data.click_id,
        secretIndex: 0,
        attempt: 2,
        idempotencyKey: null,
      },
    ]);
  });

  it('answers 401 invalid_signature for a wrong signature and never runs the handler', async () => {
    const body = JSON.stringify(buildEvent('click'));
    const answer = await deliver('plain', { body, headers: signed(body, generateSecret()) });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: { code: 'invalid_signature', message: 'Invalid signature.' } });
    expect(drain()).toEqual({ seen: [], errors: [{ code: 'invalid_signature', cause: null }] });
    const debugging = await deliver('debugging', { body, headers: signed(body, generateSecret()) });
    expect(debugging.json.error?.hint).toBeTruthy();
    expect(drain().seen).toEqual([]);
  });

  it.each([
    ['no signature', undefined, 'missing_signature'],
    ['a sha256= prefix', 'sha256=', 'malformed_signature'],
    ['63 hex digits', 'short', 'malformed_signature'],
  ] as const)('answers 401 for %s', async (_, form, code) => {
    const body = JSON.stringify(buildEvent('click'));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (form === 'sha256=') headers['x-service-signature'] = `sha256=${hmacHex(body, secret)}`;
    if (form === 'short') headers['x-service-signature'] = hmacHex(body, secret).slice(1);
    const answer = await deliver('plain', { body, headers });
    expect(answer.status).toBe(401);
    expect(answer.json.error).toEqual({ code: 'invalid_signature', message: 'Invalid signature.' });
    expect(drain()).toEqual({ seen: [], errors: [{ code, cause: null }] });
    expect((await deliver('debugging', { body, headers })).json.error?.code).toBe(code);
    expect(drain().seen).toEqual([]);
  });

  it('verifies the exact bytes of a body that JSON.stringify would not reproduce', async () => {
    const data = buildEvent('conversion').data;
    const body = `{ "timestamp":"2026-11-22T10:00:00Z" ,"data" :${JSON.stringify(data, null, 1)},  "event": "conversion","extra":1.50 , "name":"Zoë ✓"}`;
    expect(JSON.stringify(JSON.parse(body))).not.toBe(body);
    const answer = await deliver('plain', { body, headers: signed(body) });
    expect(answer.status).toBe(200);
    expect(drain().seen.map((s) => [s.event, s.id])).toEqual([['conversion', data.conversion_id]]);
  });

  it('accepts an uppercase hex signature', async () => {
    const event = buildEvent('click');
    const body = JSON.stringify(event);
    const answer = await deliver('plain', {
      body,
      headers: { 'x-service-signature': hmacHex(body, secret).toUpperCase() },
    });
    expect(answer.status).toBe(200);
    expect(drain().seen.map((s) => s.id)).toEqual([event.data.click_id]);
  });

  it('accepts the second secret of a rotation and reports which one matched', async () => {
    const event = buildEvent('click');
    const body = JSON.stringify(event);
    expect((await deliver('plain', { body, headers: signed(body, oldSecret) })).status).toBe(200);
    expect(drain().seen.map((s) => [s.id, s.secretIndex])).toEqual([[event.data.click_id, 1]]);
  });

  it('answers 400 invalid_payload for a verified body that is not an envelope', async () => {
    const event = buildEvent('click');
    const body = JSON.stringify({ ...event, data: { ...event.data, link_id: 'not-a-number' } });
    const answer = await deliver('plain', { body, headers: signed(body) });
    expect(answer.status).toBe(400);
    expect(answer.json.error?.code).toBe('invalid_payload');
    expect(answer.json.error?.message).toContain('data.link_id');
    expect(drain().seen).toEqual([]);
  });

  it('answers 400 invalid_json for verified bytes that are not JSON or not UTF-8', async () => {
    const notJson = '{"event":';
    expect((await deliver('plain', { body: notJson, headers: signed(notJson) })).json.error?.code).toBe(
      'invalid_json',
    );
    const notUtf8 = [0x7b, 0xff, 0xfe, 0x7d];
    const answer = await deliver('plain', { bytes: notUtf8, headers: signed(Uint8Array.from(notUtf8)) });
    expect(answer.status).toBe(400);
    expect(answer.json.error?.code).toBe('invalid_json');
  });

  it('answers 500 handler_error when the handler throws, and reports the cause', async () => {
    const body = JSON.stringify(buildEvent('click', { data: { click_id: 'clk_throws' } }));
    const answer = await deliver('plain', { body, headers: signed(body) });
    expect(answer.status).toBe(500);
    expect(answer.json.error?.code).toBe('handler_error');
    expect(JSON.stringify(answer.json)).not.toContain('database down');
    expect(drain().errors).toEqual([{ code: 'handler_error', cause: 'database down' }]);
  });

  it('answers an empty POST with 200 (design R18) and an unknown event with 200', async () => {
    expect(await deliver('plain', { body: '' })).toMatchObject({ status: 200, json: { received: true } });
    expect(await deliver('plain', {})).toMatchObject({ status: 200, json: { received: true } });
    expect(drain().seen).toEqual([]);
    const body = JSON.stringify({ event: 'link.archived', timestamp: '2026-11-22T10:00:00Z', data: {} });
    expect((await deliver('plain', { body, headers: signed(body) })).status).toBe(200);
    expect(drain().seen.map((s) => s.name)).toEqual(['unknown']);
  });

  it('answers 405 to GET and 413 to a body over maxBodyBytes', async () => {
    expect(await deliver('plain', { method: 'GET' })).toMatchObject({ status: 405, allow: 'POST' });
    const body = JSON.stringify(buildEvent('click', { data: { city: 'x'.repeat(8192) } }));
    const answer = await deliver('plain', { body, headers: signed(body) });
    expect(answer.status).toBe(413);
    expect(answer.json.error?.code).toBe('payload_too_large');
    expect(drain().seen).toEqual([]);
  });

  it('de-duplicates with the memory store, hashing bodies with Web Crypto SHA-256', async () => {
    const body = JSON.stringify(buildEvent('link.deleted'));
    const first = await deliver('idempotent', { body, headers: signed(body) });
    const second = await deliver('idempotent', { body, headers: signed(body) });
    expect(first.json).toEqual({ received: true });
    expect(second).toMatchObject({ status: 200, json: { received: true, duplicate: true } });
    expect(drain().seen.map((s) => s.idempotencyKey)).toEqual([
      `link.deleted:${createHash('sha256').update(body).digest('hex')}`,
    ]);
  });

  describe('constructEventAsync, verifySignatureAsync and constructEvent in the VM', () => {
    const inVm = async <T>(fn: string, ...args: unknown[]): Promise<T> =>
      JSON.parse(await vm.evaluate(`(async (args) => JSON.stringify(await (${fn})(...args)))`)(args));

    it('constructEventAsync returns the typed event for a Node-signed body and rejects a bad one', async () => {
      const event = buildEvent('click');
      const body = JSON.stringify(event);
      const fn = `async (body, sig, secrets) => {
        const ok = await __linkhooks.constructEventAsync(body, sig, secrets);
        const bad = await __linkhooks.constructEventAsync(body, sig.replace(/^./, (c) => (c === '0' ? '1' : '0')), secrets)
          .then(() => null, (e) => ({ code: e.code, isWebhookError: __linkhooks.isWebhookError(e) }));
        const bytes = await __linkhooks.constructEventAsync(new TextEncoder().encode(body), sig, secrets);
        return { ok, bad, sameFromBytes: bytes.data.click_id === ok.data.click_id };
      }`;
      const result = await inVm<{
        ok: unknown;
        bad: { code: string; isWebhookError: boolean } | null;
        sameFromBytes: boolean;
      }>(fn, body, hmacHex(body, oldSecret), [secret, oldSecret]);
      expect(result.ok).toEqual(event);
      expect(result.bad).toEqual({ code: 'invalid_signature', isWebhookError: true });
      expect(result.sameFromBytes).toBe(true);
    });

    it('verifySignatureAsync matches Node HMAC, uppercase included, and names the rotated secret', async () => {
      const body =
        '{"event":"link.deleted","timestamp":"2026-11-22T10:00:00Z","data":{"link_id":1,"slug":"a"}}';
      const fn = `async (body, secrets, sigs) => Promise.all(sigs.map((s) => __linkhooks.verifySignatureAsync(body, s, secrets)))`;
      const results = await inVm<{ valid: boolean; reason: string | null; secretIndex?: number }[]>(
        fn,
        body,
        [secret, oldSecret],
        [hmacHex(body, secret), hmacHex(body, oldSecret).toUpperCase(), hmacHex(`${body} `, secret)],
      );
      expect(results).toEqual([
        { valid: true, reason: null, secretIndex: 0 },
        { valid: true, reason: null, secretIndex: 1 },
        expect.objectContaining({ valid: false, reason: 'invalid_signature' }),
      ]);
    });

    it('signedDeliveryAsync in the VM signs exactly as Node HMAC does', async () => {
      const body = JSON.stringify(buildEvent('click'));
      const fn = `async (body, secret) => (await __linkhooks.signedDeliveryAsync({ secret, body })).headers`;
      const headers = await inVm<Record<string, string>>(fn, body, secret);
      expect(headers['x-service-signature']).toBe(hmacHex(body, secret));
    });

    it('synchronous constructEvent throws crypto_unavailable pointing to the async variant', async () => {
      const body = JSON.stringify(buildEvent('click'));
      const fn = `async (body, sig, secret) => {
        try {
          __linkhooks.constructEvent(body, sig, secret);
          return null;
        } catch (e) {
          return {
            name: e.name,
            code: e.code,
            message: e.message,
            hint: e.hint,
            instanceOf: e instanceof __linkhooks.WebhookError,
            isWebhookError: __linkhooks.isWebhookError(e),
            sync: __linkhooks.verifySignature(body, sig, secret).reason,
          };
        }
      }`;
      const thrown = await inVm<{
        name: string;
        code: string;
        message: string;
        hint: string;
        instanceOf: boolean;
        isWebhookError: boolean;
        sync: string;
      } | null>(fn, body, hmacHex(body, secret), secret);
      expect(thrown).toMatchObject({
        name: 'WebhookError',
        code: 'crypto_unavailable',
        instanceOf: true,
        isWebhookError: true,
        sync: 'crypto_unavailable',
      });
      expect(`${thrown?.message} ${thrown?.hint}`).toMatch(/node:crypto/);
      expect(`${thrown?.message} ${thrown?.hint}`).toMatch(
        /\b(?:constructEventAsync|verifySignatureAsync)\b/,
      );
    });
  });

  it('verifies the Standard Webhooks form through Web Crypto: library-signed passes, stale and replayed do not', async () => {
    const standard = (seconds: number) => {
      const body = JSON.stringify(buildEvent('click'));
      const id = `msg_${seconds}`;
      const headers = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(seconds),
        'webhook-signature': new Webhook(oldSecret).sign(id, new Date(seconds * 1000), body),
      };
      return { body, headers };
    };
    const fresh = standard(STANDARD_NOW_S - 10);
    expect((await deliver('standard', fresh)).json).toEqual({ received: true });
    expect((await deliver('standard', fresh)).json).toEqual({
      received: true,
      duplicate: true,
      code: 'replayed_webhook_id',
    });
    expect(drain().seen.map((s) => s.secretIndex)).toEqual([1]);
    const stale = standard(STANDARD_NOW_S - 301);
    expect((await deliver('standard', stale)).status).toBe(401);
    const body = JSON.stringify(buildEvent('click'));
    expect((await deliver('standard', { body, headers: signed(body) })).status).toBe(401);
    expect(drain()).toEqual({
      seen: [],
      errors: [
        { code: 'timestamp_out_of_tolerance', cause: null },
        { code: 'body_only_signature', cause: null },
      ],
    });
  });
});

import { sign } from '@linkhooks/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebhookError } from '../errors.js';
import { createDeliveryHandler } from './handle-delivery.js';

const secret = 'whsec_' + 's'.repeat(43);
const body = JSON.stringify({
  event: 'link.deleted',
  timestamp: '2026-11-22T10:00:00Z',
  data: { link_id: 1, slug: 'a' },
});
const request = (headers: Record<string, string>, raw: string = body) => ({
  method: 'POST',
  header: (name: string) => headers[name],
  readBody: async () => raw,
});

afterEach(() => vi.restoreAllMocks());

describe('the shared delivery handler', () => {
  it('logs the receiver’s own faults by default and stays quiet about rejected signatures', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const handle = createDeliveryHandler({
      secret,
      on: {
        'link.deleted': () => {
          throw new Error('disk full');
        },
      },
    });
    expect((await handle(request({ 'x-service-signature': sign(body, 'whsec_x') }))).status).toBe(401);
    expect(log).not.toHaveBeenCalled();
    expect((await handle(request({ 'x-service-signature': sign(body, secret) }))).status).toBe(500);
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0]![0])).toContain('handler_error');
  });

  it('never logs the secret, even when verification fails because of it', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const errors: WebhookError[] = [];
    const handle = createDeliveryHandler({ secret: `${secret} `, onError: (e) => errors.push(e) });
    const answer = await handle(request({ 'x-service-signature': sign(body, secret) }));
    expect(answer.status).toBe(401);
    const everything = JSON.stringify([
      answer,
      errors.map((e) => [e.message, e.hint]),
      log.mock.calls,
      warn.mock.calls,
    ]);
    expect(everything).not.toContain(secret);
  });

  it('answers normally when the onError hook itself throws', async () => {
    const handle = createDeliveryHandler({
      secret,
      onError: () => {
        throw new Error('broken logger');
      },
    });
    const answer = await handle(request({ 'x-service-signature': 'nope' }));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body).error.code).toBe('invalid_signature');
  });

  describe('a 401 to a caller', () => {
    // Each secret is set up the way a hint would describe: whitespace, no whsec_ prefix, two of them.
    const misconfigured = [`${secret}\n`, 'not-a-signing-secret'];
    const cases = [
      ['a wrong signature', sign(body, 'whsec_x'), 'invalid_signature'],
      ['a sha256= prefix', `sha256=${sign(body, secret)}`, 'malformed_signature'],
      ['no signature', undefined, 'missing_signature'],
    ] as const;

    it.each(cases)(
      'says only "invalid signature" for %s, and onError gets the reason',
      async (_, sig, code) => {
        const errors: WebhookError[] = [];
        const handle = createDeliveryHandler({ secret: misconfigured, onError: (e) => errors.push(e) });
        const answer = await handle(request(sig === undefined ? {} : { 'x-service-signature': sig }));
        expect(answer.status).toBe(401);
        expect(JSON.parse(answer.body)).toEqual({
          error: { code: 'invalid_signature', message: 'Invalid signature.' },
        });
        expect(answer.body).not.toMatch(/whitespace|whsec_|prefix|secrets?\b|sha256|header/i);
        expect(errors.map((e) => e.code)).toEqual([code]);
        expect(errors[0]!.hint).toBeTruthy();
      },
    );

    it('names the failure and the hint with exposeHints, for development', async () => {
      const handle = createDeliveryHandler({ secret: misconfigured, exposeHints: true, onError: () => {} });
      const wrong = JSON.parse(
        (await handle(request({ 'x-service-signature': sign(body, 'whsec_x') }))).body,
      );
      expect(wrong.error).toMatchObject({
        code: 'invalid_signature',
        hint: expect.stringMatching(/whitespace/),
      });
      const prefixed = await handle(request({ 'x-service-signature': `sha256=${sign(body, secret)}` }));
      expect(JSON.parse(prefixed.body).error).toMatchObject({
        code: 'malformed_signature',
        hint: expect.stringMatching(/sha256=/),
      });
    });

    it('keeps hints out of other error answers too unless exposeHints is on', async () => {
      const failing = {
        method: 'POST',
        header: () => undefined,
        readBody: async (): Promise<string> => {
          throw new WebhookError('body_already_parsed', 'A body parser consumed the request first.', {
            hint: 'Mount the webhook route before express.json().',
          });
        },
      };
      const quiet = createDeliveryHandler({ secret, onError: () => {} });
      const loud = createDeliveryHandler({ secret, onError: () => {}, exposeHints: true });
      expect(JSON.parse((await quiet(failing)).body).error).toEqual({
        code: 'body_already_parsed',
        message: 'A body parser consumed the request first.',
      });
      expect(JSON.parse((await loud(failing)).body).error.hint).toMatch(/express\.json/);
    });
  });

  it('rejects bad options when it is built', () => {
    expect(() => createDeliveryHandler({ secret: [] })).toThrow(/secret/);
    expect(() => createDeliveryHandler({ secret: ['ok', ''] })).toThrow(/secret/);
    expect(() => createDeliveryHandler({ secret, maxBodyBytes: -1 })).toThrow(
      'linkhooks: `maxBodyBytes` must be a whole number of bytes above 0, got -1',
    );
    expect(() => createDeliveryHandler(undefined as never)).toThrow(/options/);
  });

  it('refuses, when it is built, a Standard Webhooks secret that is not base64, and says which', () => {
    const standard = { scheme: 'standard-webhooks' } as const;
    const refused = (secret: string | string[]) => {
      try {
        createDeliveryHandler({ secret, ...standard });
      } catch (error) {
        return error instanceof WebhookError ? [error.code, error.message] : error;
      }
      return 'built';
    };
    expect(refused('whsec_not*base64!')).toEqual([
      'invalid_secret',
      expect.stringMatching(/not a Standard Webhooks secret: whsec_ followed by base64/),
    ]);
    expect(refused([secret, 'whsec_not*base64!'])).toEqual([
      'invalid_secret',
      expect.stringMatching(/entry 1 \(the second\): It is not a Standard Webhooks secret/),
    ]);
    expect(refused(secret)).toBe('built');
    // The body-only scheme signs with the secret's text: any usable text is a key there.
    expect(() => createDeliveryHandler({ secret: 'whsec_not*base64!' })).not.toThrow();
  });

  it('ignores an X-Service-Attempt that is not a positive integer', async () => {
    let attempt: number | undefined = -1;
    const handle = createDeliveryHandler({
      secret,
      on: {
        'link.deleted': (_e, ctx) => {
          attempt = ctx.attempt;
        },
      },
    });
    await handle(request({ 'x-service-signature': sign(body, secret), 'x-service-attempt': 'two' }));
    expect(attempt).toBeUndefined();
  });
});

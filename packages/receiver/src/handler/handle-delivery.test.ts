import { sign } from '@linkhooks/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebhookError } from '../errors.js';
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
    expect(JSON.parse(answer.body).error.code).toBe('malformed_signature');
  });

  it('rejects bad options when it is built', () => {
    expect(() => createDeliveryHandler({ secret: [] })).toThrow(/secret/);
    expect(() => createDeliveryHandler({ secret: ['ok', ''] })).toThrow(/secret/);
    expect(() => createDeliveryHandler({ secret, maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => createDeliveryHandler(undefined as never)).toThrow(/options/);
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

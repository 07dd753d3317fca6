/**
 * The Next.js adapters' options, checked on the first delivery rather than at import (so that
 * `next build` runs without the secret): the adapters called as Next calls them, without the app
 * that next.test.ts builds.
 */
import { createServer } from 'node:http';
import type { WebhookError } from '@linkhooks/receiver';
import { webhookApiRoute, webhookRoute } from '@linkhooks/receiver/next';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import { describe, expect, it } from 'vitest';
import { close, listen, post } from './helpers/servers.js';

const unset = process.env.LINKHOOKS_SECRET_NEVER_SET as string;
const delivery = signedDelivery({ secret: generateSecret(), event: buildEvent('click') });

describe('a Next.js adapter made without a secret', () => {
  it('is made at import, then answers each delivery 500 invalid_secret and tells onError (App Router)', async () => {
    const errors: WebhookError[] = [];
    const POST = webhookRoute({ secret: unset, on: {}, onError: (e) => errors.push(e) });
    for (let i = 0; i < 2; i++) {
      const response = await POST(
        new Request('http://localhost/api/webhooks', {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        }),
      );
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: { code: 'invalid_secret' } });
    }
    expect(errors.map((e) => e.code)).toEqual(['invalid_secret', 'invalid_secret']);
  });

  it('answers each delivery 500 invalid_secret and tells onError (Pages Router)', async () => {
    const errors: WebhookError[] = [];
    const route = webhookApiRoute({ secret: unset, on: {}, onError: (e) => errors.push(e) });
    const server = createServer((req, res) => void route(req, res));
    const base = await listen(server);
    try {
      const answer = await post(`${base}/api/webhooks`, delivery.body, delivery.headers);
      expect(answer.status).toBe(500);
      expect(answer.json.error?.code).toBe('invalid_secret');
      expect(errors.map((e) => e.code)).toEqual(['invalid_secret']);
    } finally {
      await close(server);
    }
  });

  it('still throws for a mistake in the code, a misspelt handler name', async () => {
    const POST = webhookRoute({ secret: generateSecret(), on: { clicks: () => {} } as never });
    await expect(
      POST(new Request('http://localhost/api/webhooks', { method: 'POST', body: delivery.body })),
    ).rejects.toThrow(/no event is named "clicks"/);
  });
});

/**
 * The dashboard framed by the platform's app (design D55) and the base of portal links (design
 * D54): no site may frame it by default; allowed origins may, and then the session cookie set over
 * TLS is `SameSite=None; Secure; Partitioned` so it works in their frame, while a change made with
 * it still needs the CSRF header. A bad origin is refused when the service is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/api/service-app.js';
import { isSenderError } from '../../src/errors.js';
import { type Api, SERVICE_TOKEN, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

const APP = 'https://app.example.com';
const certs = createTestCertificates();
let closed: Api;
let embeddable: Api;

beforeAll(async () => {
  closed = await startApi(certs);
  embeddable = await startApi(
    certs,
    {},
    {
      frameAncestors: `${APP} https://admin.example.com`,
      trustProxy: true,
      publicUrl: 'https://hooks.example.com',
    },
  );
});
afterAll(async () => {
  await closed.close();
  await embeddable.close();
});

const frameAncestorsOf = (res: Response) =>
  /frame-ancestors [^;]+/.exec(res.headers.get('content-security-policy') ?? '')?.[0];

async function linkOf(api: Api): Promise<string> {
  const res = await api.call('POST', '/internal/v1/portal-sessions', {
    key: SERVICE_TOKEN,
    body: { account_id: api.alice.account.id },
  });
  expect(res.status).toBe(201);
  return res.json.url;
}

/** Opens the link on this service (whatever base it names), as over TLS behind the proxy or not. */
const open = (api: Api, link: string, tls: boolean) =>
  fetch(api.base + new URL(link).pathname + new URL(link).search, {
    redirect: 'manual',
    headers: tls ? { 'x-forwarded-proto': 'https' } : {},
  });

describe('framing the dashboard', () => {
  it('is refused to every site by default, on the dashboard and on the portal’s pages', async () => {
    expect(frameAncestorsOf(await fetch(`${closed.base}/dashboard`))).toBe("frame-ancestors 'none'");
    expect(frameAncestorsOf(await fetch(`${closed.base}/portal?token=lhp_x`))).toBe("frame-ancestors 'none'");
  });

  it('is allowed to the origins given, and to the service itself', async () => {
    const allowed = `frame-ancestors 'self' ${APP} https://admin.example.com`;
    expect(frameAncestorsOf(await fetch(`${embeddable.base}/dashboard`))).toBe(allowed);
    expect(frameAncestorsOf(await fetch(`${embeddable.base}/portal?token=lhp_x`))).toBe(allowed);
  });

  it('refuses an origin it cannot put in the header as it is, when the service is made', () => {
    for (const frameAncestors of [
      'https://*.example.com',
      'https://app.example.com/path',
      'http://app.example.com',
    ]) {
      let error: unknown;
      try {
        createServiceApp({ sender: closed.sender, frameAncestors });
      } catch (e) {
        error = e;
      }
      expect(isSenderError(error) && error.code, frameAncestors).toBe('invalid_option');
    }
    expect(() => createServiceApp({ sender: closed.sender, publicUrl: 'hooks.example.com' })).toThrow(
      /public URL/,
    );
  });
});

describe('the session cookie', () => {
  it('stays SameSite=Strict where no site may frame the dashboard', async () => {
    const res = await open(closed, await linkOf(closed), false);
    expect(res.headers.get('set-cookie')).toMatch(/; SameSite=Strict; Path=\/; Max-Age=\d+$/);
  });

  it('is SameSite=None; Secure; Partitioned over TLS where sites may frame it, Strict over plain HTTP', async () => {
    const tls = await open(embeddable, await linkOf(embeddable), true);
    expect(tls.status).toBe(303);
    expect(tls.headers.get('set-cookie')).toMatch(
      /^linkhooks_session=[\w-]{43}; HttpOnly; SameSite=None; Path=\/; Max-Age=\d+; Secure; Partitioned$/,
    );
    const plain = await open(embeddable, await linkOf(embeddable), false);
    expect(plain.headers.get('set-cookie')).toMatch(/; SameSite=Strict; Path=\/; Max-Age=\d+$/);
  });

  it('still needs the CSRF header for a change, and is cleared with the same attributes', async () => {
    const cookie = (await open(embeddable, await linkOf(embeddable), true)).headers
      .get('set-cookie')!
      .split(';')[0]!;
    const headers = { cookie, 'x-forwarded-proto': 'https' };
    const body = { url: 'https://127.0.0.1:9/hook', events: ['click'] };
    const forged = await embeddable.call('POST', '/v1/endpoints', { key: null, headers, body });
    expect(forged.status).toBe(403);
    expect(forged.json.error.code).toBe('csrf_check_failed');
    const out = await embeddable.call('DELETE', '/v1/session', {
      key: null,
      headers: { ...headers, 'x-linkhooks-csrf': '1' },
    });
    expect(out.headers.get('set-cookie')).toBe(
      'linkhooks_session=; HttpOnly; SameSite=None; Path=/; Max-Age=0; Secure; Partitioned',
    );
  });
});

describe('the link’s base', () => {
  it('is the public URL when one is set, else the address the platform called', async () => {
    expect(await linkOf(embeddable)).toMatch(/^https:\/\/hooks\.example\.com\/portal\?token=lhp_/);
    expect(await linkOf(closed)).toMatch(new RegExp(`^${closed.base}/portal\\?token=lhp_`));
  });
});

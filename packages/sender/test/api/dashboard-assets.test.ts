/** The dashboard as the service serves it: the built page, script and stylesheet, under a strict CSP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, startApi } from '../helpers/api-service.js';
import { createTestCertificates } from '../helpers/test-ca.mjs';

let api: Api;
beforeAll(async () => {
  api = await startApi(createTestCertificates());
});
afterAll(() => api.close());

describe('the dashboard files', () => {
  it('serves the page, its script and its stylesheet from this origin only', async () => {
    const page = await fetch(`${api.base}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/dashboard/app.js"></script>');
    expect(html).not.toMatch(/<script>(?!<\/script>)/); // nothing inline
    const script = await fetch(`${api.base}/dashboard/app.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(5_000);
    expect((await fetch(`${api.base}/dashboard/style.css`)).headers.get('content-type')).toMatch(/text\/css/);
    const root = await fetch(`${api.base}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard');
  });

  it('answers the page, under the same CSP, at every view’s address, and nothing else under it', async () => {
    const html = await (await fetch(`${api.base}/dashboard`)).text();
    for (const path of [
      '/dashboard/log?status=failed&q=clk_1',
      '/dashboard/deliveries/dlv_1',
      '/dashboard/endpoints/ep_1',
    ]) {
      const res = await fetch(`${api.base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("style-src 'self'");
      expect(await res.text()).toBe(html);
    }
    for (const path of ['/dashboard/deliveries', '/dashboard/other.js', '/dashboard/deliveries/a/b'])
      expect((await fetch(`${api.base}${path}`)).status).toBe(404);
  });

  it('serves the charts’ chunk the script imports, and no other file', async () => {
    const script = await (await fetch(`${api.base}/dashboard/app.js`)).text();
    const chunk = /"\.\/(chunk-[A-Z0-9]+\.js)"/.exec(script)?.[1];
    expect(chunk).toBeDefined();
    const res = await fetch(`${api.base}/dashboard/${chunk}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(await res.text()).toContain('uplot');
    expect((await fetch(`${api.base}/dashboard/chunk-NOPE.js`)).status).toBe(404);
  });

  it('serves uPlot’s rules in the one stylesheet, and no inline style in the page', async () => {
    const css = await (await fetch(`${api.base}/dashboard/style.css`)).text();
    expect(css).toContain('.uplot');
    expect(css).toContain('.timeline');
    expect(await (await fetch(`${api.base}/dashboard`)).text()).not.toMatch(/style=|<style/);
  });
});

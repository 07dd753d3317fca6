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
});

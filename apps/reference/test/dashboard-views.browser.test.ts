/**
 * The dashboard's addresses, search, statistics and narrow screens in real Chromium against the
 * reference app: a delivery's address opens it after a reload, Back returns to the filtered log,
 * a click_id finds its delivery, the charts draw the endpoint's attempts, and at 390 px nothing
 * makes the page scroll sideways. Screenshots go to .artifacts/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleEventData } from '@linkhooks/protocol';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceApp, startReferenceApp } from '../src/reference-app.js';
import { CHROMIUM, hasChromium } from './tools.js';

const artifacts = fileURLToPath(new URL('../../../.artifacts', import.meta.url));
const TOKEN = 'svc_browser_views_token';
const CLICK_ID = `clk_views_${process.pid}`;
const available = hasChromium();
let app: ReferenceApp;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-dashboard-views-'));
  app = await startReferenceApp({
    dbFile: join(dir, 'reference.db'),
    timeScale: 0.00002,
    serviceToken: TOKEN,
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  // Two clicks with their own click_ids (one the test searches for) and a conversion of another.
  for (const clickId of [CLICK_ID, `${CLICK_ID}_other`]) {
    const res = await fetch(`${app.serviceUrl}/internal/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        account_id: app.accountId,
        event: 'click',
        data: { ...sampleEventData('click'), click_id: clickId },
      }),
    });
    expect(res.status).toBe(202);
  }
});
afterAll(async () => {
  if (!available) return;
  await browser?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A signed-in page of the given width, with the clipboard allowed. */
async function signedIn(width: number): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width, height: 844 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  await page.goto(app.dashboardUrl);
  await page.getByLabel('API key').fill(app.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
  return { context, page };
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(artifacts, `dashboard-${name}.png`), fullPage: true });
const path = (page: Page) => new URL(page.url()).pathname + new URL(page.url()).search;
const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

describe.runIf(available)('the dashboard’s views in Chromium', () => {
  it('finds a delivery by click_id, opens it at its own address after a reload, and goes Back to the search', async () => {
    const { context, page } = await signedIn(1280);
    try {
      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Delivery log' })
        .click();
      await page.getByLabel('Status').selectOption('delivered');
      await page.getByLabel('Search').fill(CLICK_ID);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => path(page)).toBe(`/dashboard/log?status=delivered&q=${CLICK_ID}`);
      // The click was delivered once to the sample receiver's endpoint; the other click is not shown.
      const rows = page.locator('tr[data-delivery]');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      expect(await rows.first().locator('.endpoint-url').textContent()).toContain(
        new URL(app.endpoint.url).host,
      );
      expect(await rows.first().locator('.when').textContent()).toMatch(/^finished /);
      await shot(page, 'search');

      const id = await rows.first().getAttribute('data-delivery');
      await rows.first().locator('a.open').click();
      await expect.poll(() => path(page)).toBe(`/dashboard/deliveries/${id}`);
      await page.reload();
      await page.getByRole('heading', { name: `Delivery ${id}` }).waitFor();
      expect(await page.locator('pre.body').textContent()).toContain(CLICK_ID);
      await page.getByRole('button', { name: 'Copy delivery id' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(id);

      await page.goBack();
      await expect.poll(() => path(page)).toBe(`/dashboard/log?status=delivered&q=${CLICK_ID}`);
      expect(await page.getByLabel('Search').inputValue()).toBe(CLICK_ID);
      expect(await page.getByLabel('Status').inputValue()).toBe('delivered');
      await expect.poll(() => rows.count()).toBe(1);
      // The page's own link back does the same.
      await rows.first().locator('a.open').click();
      await page.getByRole('link', { name: '← Back to the log' }).click();
      await expect.poll(() => path(page)).toBe(`/dashboard/log?status=delivered&q=${CLICK_ID}`);
    } finally {
      await context.close();
    }
  });

  it('says the endpoint is gone when the log is filtered by one that no longer exists', async () => {
    const { context, page } = await signedIn(1280);
    try {
      await page.goto(`${app.dashboardUrl}/log?endpoint=ep_deleted_since`);
      await page.getByRole('alert').filter({ hasText: 'This endpoint no longer exists' }).waitFor();
      await page.getByLabel('Endpoint').selectOption('');
      await expect
        .poll(() => page.locator('tr[data-delivery]').count(), { timeout: 15_000 })
        .toBeGreaterThan(0);
      expect(await page.getByRole('alert').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('draws the endpoint’s attempts, pauses, resumes and recovers it', async () => {
    const { context, page } = await signedIn(1280);
    try {
      await page.goto(`${app.serviceUrl}/dashboard/endpoints/${app.endpoint.id}`);
      const attempts = page.locator('[data-stat="attempts"]');
      await expect
        .poll(() => attempts.textContent(), { timeout: 15_000 })
        .toMatch(/^[1-9]\d* \([1-9]\d* succeeded/);
      expect(await page.locator('[data-stat="success-rate"]').textContent()).toMatch(/^\d+\.\d %$/);
      expect(await page.locator('[data-stat="latency"]').textContent()).toMatch(
        // Each in the unit that fits it (formatSpan): a second or more on a loaded machine.
        /^p50 (\d+ ms|\d+(\.\d)? s) · p95 (\d+ ms|\d+(\.\d)? s)$/,
      );
      expect(await page.locator('[data-stat="deliveries"]').textContent()).toMatch(/^[1-9]\d* delivered/);
      // Pixels of one colour on the n-th chart's canvas: green bars of succeeded attempts on the
      // first, the blue line of the mean time to answer on the second.
      const pixels = (chart: number, colour: 'green' | 'blue') =>
        page.evaluate(
          ([chart, colour]) => {
            const canvas = document.querySelectorAll('.chart-box canvas')[chart] as
              | HTMLCanvasElement
              | undefined;
            if (!canvas) return 0;
            const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
            let n = 0;
            for (let i = 0; i < data.length; i += 4) {
              const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
              if (a === 0) continue;
              if (colour === 'green' ? g > r + 40 && g > b + 20 : b > r + 80 && b > g + 60) n++;
            }
            return n;
          },
          [chart, colour] as const,
        );
      await expect.poll(() => pixels(0, 'green')).toBeGreaterThan(20);
      await expect.poll(() => pixels(1, 'blue')).toBeGreaterThan(5);
      expect(await page.getByText('Time to answer per hour').count()).toBe(1);
      await shot(page, 'endpoint-stats');
      // The last hour in five-minute bars: the app's traffic of the last minutes draws there.
      await page.getByLabel('Window').selectOption('1h');
      await page.getByText('Attempts per five minutes, by outcome').waitFor();
      await expect.poll(() => pixels(0, 'green')).toBeGreaterThan(20);
      await shot(page, 'endpoint-stats-1h');
      await page.getByLabel('Window').selectOption('24h');
      await page.getByText('Time to answer per hour').waitFor();

      await page.getByRole('button', { name: 'Pause' }).click();
      await expect.poll(() => page.locator('li.endpoint .status').textContent()).toBe('Paused');
      expect(await page.locator('.paused-since').textContent()).toMatch(/^since .*until you resume$/);
      await page.getByRole('button', { name: 'Resume' }).click();
      await expect.poll(() => page.locator('li.endpoint .status').textContent()).toBe('Enabled');
      await page.getByLabel('From').fill('2020-01-01T00:00');
      await page.getByRole('button', { name: 'Recover' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /^\d+ failed deliver(y|ies) scheduled/ })
        .waitFor();
    } finally {
      await context.close();
    }
  });

  it('fits a 390 px wide screen: the log, a delivery and an endpoint never scroll sideways', async () => {
    const { context, page } = await signedIn(390);
    try {
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await shot(page, 'narrow-endpoints');
      await page.goto(`${app.serviceUrl}/dashboard/log`);
      await page.locator('tr[data-delivery]').first().waitFor({ timeout: 15_000 });
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await shot(page, 'narrow-log');
      await page.locator('tr[data-delivery] a.open').first().click();
      await page.locator('details.attempt').first().waitFor();
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await shot(page, 'narrow-delivery');
      await page.goto(`${app.serviceUrl}/dashboard/endpoints/${app.endpoint.id}`);
      await page.locator('.chart-box canvas').first().waitFor();
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await shot(page, 'narrow-endpoint');
    } finally {
      await context.close();
    }
  });
});

/**
 * The dashboard in real Chromium against the real reference app (service, SQLite, HTTPS sample
 * receiver): sign in, create an endpoint and watch its deliveries arrive; open an attempt; make the
 * receiver fail and see the retries; see the endpoint disabled, then re-enable it with replay.
 * Screenshots go to .artifacts/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleEventData } from '@linkhooks/protocol';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ReferenceApp, startReferenceApp } from '../src/reference-app.js';
import { CHROMIUM, hasChromium } from './tools.js';

const artifacts = fileURLToPath(new URL('../../../.artifacts', import.meta.url));
const TOKEN = 'svc_browser_test_token';
const available = hasChromium();
let app: ReferenceApp;
let browser: Browser;
let page: Page;
let dir: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-dashboard-'));
  // 10.5 hours × 0.00002 ≈ 0.8 s: the whole retry schedule within a test.
  app = await startReferenceApp({
    dbFile: join(dir, 'reference.db'),
    timeScale: 0.00002,
    serviceToken: TOKEN,
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
});
afterAll(async () => {
  if (!available) return;
  await browser?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  if (!available) return;
  await fetch(`${app.serviceUrl}/reference/receiver`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'ok' }),
  });
});

const shot = (name: string) =>
  page.screenshot({ path: join(artifacts, `dashboard-${name}.png`), fullPage: true });
const endpointItem = (url: string) =>
  page.locator('li.endpoint', { has: page.locator('.url', { hasText: url }) });

describe.runIf(available)('the dashboard in Chromium', () => {
  it('signs in with the API key, creates an endpoint and shows its deliveries arriving', async () => {
    await page.goto(app.dashboardUrl);
    await page.getByLabel('API key').fill(app.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    // The key went into a cookie-backed session: nothing of it stays in the page's storage.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + document.cookie)).not.toContain(
      'lhk_',
    );

    const url = app.receiver.url.replace('/webhooks/linkhooks', '/webhooks/dashboard');
    await page.getByLabel('HTTPS URL').last().fill(url);
    await page.getByLabel('Description').last().fill('made in the dashboard');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Its secret' }).waitFor();
    const item = endpointItem(url);
    await item.waitFor();
    // The form starts again: a second click would not make the same endpoint twice.
    expect(await page.getByLabel('HTTPS URL').last().inputValue()).toBe('');
    await item.getByRole('button', { name: 'Send test event' }).click();
    await item.getByRole('status').filter({ hasText: 'Test event sent' }).waitFor();
    await item.getByRole('link', { name: 'Delivery log' }).click();
    // The log refreshes itself: the delivery shows up delivered without a reload.
    await page.locator('tr[data-status="delivered"]').first().waitFor({ timeout: 15_000 });
    await shot('deliveries');
  });

  it('opens a delivery and shows each attempt with its request and answer', async () => {
    await page.locator('tr[data-status="delivered"] a.open').first().click();
    await page.getByRole('heading', { name: /Delivery/ }).waitFor();
    const attempt = page.locator('details.attempt').first();
    // Its duration in the unit that fits it (formatSpan): a second or more on a loaded machine.
    await expect
      .poll(() => attempt.locator('summary').textContent())
      .toMatch(/Attempt 1 .* 200 · (\d+ ms|\d+(\.\d)? s)$/);
    const text = await attempt.textContent();
    expect(text).toMatch(/x-service-signature: [0-9a-f]{64}/);
    expect(text).toMatch(/\{"received":true\}/);
    expect(await page.locator('pre.body').textContent()).toMatch(/^\{"event":"/);
    await shot('attempt');
  });

  it('makes the receiver fail and shows the retries on the schedule until the delivery fails', async () => {
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByLabel('Fail with 500').check();
    await expect
      .poll(async () => (await (await fetch(`${app.serviceUrl}/reference/receiver`)).json()).mode)
      .toBe('fail');
    const item = endpointItem(app.endpoint.url);
    await item.getByRole('button', { name: 'Send test event' }).click();
    await item.getByRole('link', { name: 'Delivery log' }).click();
    await page.getByLabel('Status').selectOption('failed');
    await page.locator('tr[data-status="failed"] a.open').first().click({ timeout: 15_000 });
    await expect.poll(() => page.locator('details.attempt').count(), { timeout: 15_000 }).toBe(6);
    expect(await page.locator('.timeline li.failed').count()).toBe(6);
    expect(await page.locator('details.attempt summary').first().textContent()).toMatch(/500/);
    await shot('retries');
  });

  it('shows the endpoint disabled after 10 failed deliveries, then re-enables it with replay', async () => {
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByLabel('Fail with 500').check();
    await expect
      .poll(async () => (await (await fetch(`${app.serviceUrl}/reference/receiver`)).json()).mode)
      .toBe('fail');
    for (let i = 0; i < 10; i++) {
      await fetch(`${app.serviceUrl}/internal/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: app.accountId, event: 'click', data: sampleEventData('click') }),
      });
    }
    const item = endpointItem(app.endpoint.url);
    // The endpoints view refreshes itself: the status changes without a reload.
    await expect.poll(() => item.locator('.status').textContent(), { timeout: 20_000 }).toBe('Disabled');
    expect(await item.locator('.disabled-reason').textContent()).toMatch(/10 deliveries in a row failed/);
    // While disabled, new events are recorded as skipped.
    await fetch(`${app.serviceUrl}/internal/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        account_id: app.accountId,
        event: 'link.deleted',
        data: sampleEventData('link.deleted'),
      }),
    });
    await shot('disabled');

    await page.getByLabel('Answer 200').check();
    await expect
      .poll(async () => (await (await fetch(`${app.serviceUrl}/reference/receiver`)).json()).mode)
      .toBe('ok');
    const before = app.receiver.received.length;
    await item.getByLabel('Replay skipped events').check();
    await item.getByRole('button', { name: 'Re-enable' }).click();
    await item
      .getByRole('status')
      .filter({ hasText: /Re-enabled: \d+ held resumed, [1-9]\d* skipped replayed/ })
      .waitFor();
    await expect
      .poll(() => app.receiver.received.slice(before).some((r) => r.event.event === 'link.deleted'), {
        timeout: 15_000,
      })
      .toBe(true);
    await expect.poll(() => item.locator('.status').textContent()).toBe('Enabled');
    await shot('reenabled');
  });

  it('is usable from the keyboard alone: sign in, move between sections, open a delivery', async () => {
    const tab = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    try {
      await tab.goto(app.dashboardUrl);
      await tab.getByLabel('API key').waitFor();
      await tab.keyboard.press('Tab'); // the first control is the API key field, labelled
      expect(await tab.evaluate(() => document.activeElement?.id)).toBe('api-key');
      await tab.keyboard.type(app.apiKey);
      await tab.keyboard.press('Enter');
      await tab.getByRole('heading', { name: 'Endpoints' }).waitFor();
      // Tab to the "Delivery log" section button and press Enter.
      for (let i = 0; i < 10; i++) {
        await tab.keyboard.press('Tab');
        if ((await tab.evaluate(() => document.activeElement?.textContent)) === 'Delivery log') break;
      }
      await tab.keyboard.press('Enter');
      await tab.getByRole('heading', { name: /^Delivery log/ }).waitFor();
      const first = tab.locator('tr[data-delivery] a.open').first();
      await first.waitFor();
      await first.focus();
      await tab.keyboard.press('Enter');
      await tab.getByRole('button', { name: 'Retry now' }).waitFor();
      // Every form control on the page has an accessible name.
      const unnamed = await tab.evaluate(
        () =>
          Array.from(document.querySelectorAll('input, select, button')).filter(
            (el) =>
              !el.textContent?.trim() &&
              !(el as HTMLInputElement).labels?.length &&
              !el.getAttribute('aria-label'),
          ).length,
      );
      expect(unnamed).toBe(0);
    } finally {
      await tab.close();
    }
  });

  it('turns Standard Webhooks on, rotates the secret with a grace period and labels test deliveries', async () => {
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByLabel('Answer 200').check();
    const url = app.receiver.url.replace('/webhooks/linkhooks', '/webhooks/dashboard');
    const item = endpointItem(url);
    await item.waitFor();
    expect(await item.locator('.standard-webhooks').textContent()).toBe('off');
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel(/Standard Webhooks headers/).check();
    await item.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => item.locator('.standard-webhooks').textContent()).toBe('on');

    await item.getByLabel('Grace period').selectOption({ label: '1 hour' });
    await item.getByRole('button', { name: 'Rotate secret' }).click();
    await item.getByRole('status').filter({ hasText: 'keeps signing X-Service-Signature until' }).waitFor();
    expect(await item.locator('code.secret').textContent()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await expect.poll(() => item.locator('.previous-secret').textContent()).toMatch(/still signing until/);
    await shot('rotation');

    // The earlier test's failing clicks disabled this endpoint too.
    if ((await item.locator('.status').textContent()) === 'Disabled') {
      await item.getByRole('button', { name: 'Re-enable' }).click();
      await expect.poll(() => item.locator('.status').textContent()).toBe('Enabled');
    }
    await item.getByRole('button', { name: 'Send test event' }).click();
    await item.getByRole('status').filter({ hasText: 'Test event sent' }).waitFor();
    await item.getByRole('link', { name: 'Delivery log' }).click();
    await page.locator('tr[data-delivery] .badge.test').first().waitFor({ timeout: 15_000 });
    await shot('test-label');
  });
});

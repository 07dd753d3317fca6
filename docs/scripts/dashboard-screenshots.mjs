/**
 * `pnpm --filter @linkhooks/docs screenshots`: the pictures of the dashboard guide
 * (guide/dashboard.md), taken from the reference app in Chromium at 1280 px wide and saved to
 * public/dashboard/. Run it by hand when the dashboard changes, look at the pictures, commit them.
 *
 * It starts the reference app (service, SQLite, sample HTTPS receiver) on free ports with retries
 * run fast, publishes traffic (deliveries that succeed, fail and disable the endpoint), and finds
 * each control by its role and name, as a reader does. A control the dashboard does not have leaves
 * its picture untaken: the run names each one and exits 1, since the guide would show an old one.
 *
 * The reference app is TypeScript that runs with tsx, so the package script runs this file from
 * apps/reference with its tsx: `node --import tsx ../../docs/scripts/dashboard-screenshots.mjs`.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleEventData } from '@linkhooks/protocol';
import { chromium } from 'playwright-core';

const reference = new URL('../../apps/reference/', import.meta.url);
const { startReferenceApp } = await import(new URL('src/reference-app.ts', reference).href);

const out = fileURLToPath(new URL('../public/dashboard/', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const WIDTH = 1280;
const WAIT_MS = 20_000;

/** Waits until `check()` is true, or throws naming `what`. */
async function until(check, what) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-screenshots-'));
// 10.5 hours of retries × 0.00002 ≈ 0.8 s: a delivery fails for good within a second.
const app = await startReferenceApp({ dbFile: join(dir, 'reference.db'), timeScale: 0.00002 });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
const taken = [];
const skipped = [];

/** The deliveries of the account in one state, read from the management API. */
async function count(status) {
  const answer = await fetch(`${app.serviceUrl}/v1/deliveries?status=${status}&limit=100`, {
    headers: { authorization: `Bearer ${app.apiKey}` },
  });
  return (await answer.json()).data.length;
}

async function publish(event, data = sampleEventData(event)) {
  await app.sender.publish(app.accountId, { event, data });
  return data;
}

/**
 * Saves a picture of `locator`, cropped to it and to `maxHeight` px, as `name`.png; when `locator`
 * does not show up, or `prepare` finds a control missing, the picture is not taken and the run fails
 * at the end, naming it (the others are still taken).
 */
async function shot(name, locator, prepare, maxHeight = 900) {
  try {
    if (prepare) await prepare();
    const element = locator.first();
    await element.waitFor({ timeout: 5_000 }).catch(() => {
      throw new Error('not on the page');
    });
    await element.scrollIntoViewIfNeeded();
    const box = await element.boundingBox();
    const scroll = await page.evaluate(() => ({ x: window.scrollX, y: window.scrollY }));
    const path = join(out, `${name}.png`);
    await page.screenshot({
      path,
      fullPage: true,
      animations: 'disabled',
      clip: {
        x: box.x + scroll.x,
        y: box.y + scroll.y,
        width: box.width,
        height: Math.min(box.height, maxHeight),
      },
    });
    taken.push(`${name}.png (${Math.round(statSync(path).size / 1024)} KB)`);
  } catch (error) {
    skipped.push(`${name}.png: ${error.message.split('\n')[0]}`);
  }
}

/** The control named `name` (a button or a link), whichever the dashboard uses. */
const control = (scope, name) =>
  scope.getByRole('button', { name, exact: true }).or(scope.getByRole('link', { name, exact: true }));

/** Clicks the control named `name`; fails, naming it, when the dashboard shows no such control. */
async function click(scope, name) {
  const found = control(scope, name).first();
  await found.waitFor({ timeout: 5_000 }).catch(() => {
    throw new Error(`no "${name}" control`);
  });
  await found.click();
}

const logRegion = page.getByRole('region', { name: /^Delivery log/ });
const detailRegion = page.getByRole('region', { name: /Delivery/ }).filter({ hasText: 'Attempts' });
// The reference app's endpoint: on its own page where the dashboard has one, else its list item.
const endpointArea = page
  .getByRole('region', { name: app.endpoint.description })
  .or(page.getByRole('listitem').filter({ hasText: app.receiver.url }));

/** The endpoints, then the endpoint's own page where its URL links to one. */
async function showEndpoint() {
  await click(page, 'Endpoints');
  await page.getByRole('listitem').filter({ hasText: app.receiver.url }).first().waitFor();
  const url = page.getByRole('link', { name: app.receiver.url, exact: true });
  if ((await url.count()) === 0) return;
  await url.first().click();
  await page.getByRole('region', { name: app.endpoint.description }).waitFor();
}

try {
  mkdirSync(out, { recursive: true });

  // Traffic: deliveries that succeed, then two that fail every attempt.
  const clicks = [];
  for (const event of ['click', 'click', 'conversion', 'click', 'link.updated', 'click', 'alert.triggered'])
    clicks.push(await publish(event));
  await until(async () => (await count('delivered')) >= 7, 'the first deliveries');
  app.setReceiverMode('fail');
  await publish('click');
  await publish('conversion');
  await until(async () => (await count('failed')) >= 2, 'the failed deliveries');
  app.setReceiverMode('ok');

  await page.goto(app.dashboardUrl);
  // The sign-in page as it opens: the page's top, down to below the form.
  await shot(
    'sign-in',
    page.locator('body'),
    () => page.getByRole('form', { name: 'Sign in' }).waitFor(),
    320,
  );
  await page.getByLabel('API key').fill(app.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Endpoints' }).waitFor();

  await shot('endpoints', page.getByRole('region', { name: 'Endpoints' }));

  await shot('delivery-log', logRegion, () => click(page, 'Delivery log'));

  await shot('search', logRegion, async () => {
    const search = page.getByLabel('Search');
    if ((await search.count()) === 0) throw new Error('no "Search" field');
    await search.fill(clicks[0].click_id);
    await search.press('Enter');
    await until(async () => (await logRegion.locator('tbody tr').count()) === 1, 'one delivery found');
  });

  await shot(
    'delivery',
    detailRegion,
    async () => {
      await click(page, 'Delivery log');
      await page.getByLabel('Status').waitFor();
      const search = page.getByLabel('Search');
      if ((await search.count()) > 0) {
        await search.fill('');
        await search.press('Enter');
      }
      await page.getByLabel('Status').selectOption('failed');
      await logRegion
        .locator('tbody tr[data-status="failed"] button, tbody tr[data-status="failed"] a')
        .first()
        .click();
      await detailRegion.locator('details summary').first().click();
    },
    760,
  );

  await shot('secret', endpointArea, async () => {
    await showEndpoint();
    await click(endpointArea, 'Show secret');
    await page
      .getByText(/whsec_/)
      .first()
      .waitFor();
  });

  await shot('rotate', endpointArea, async () => {
    await click(endpointArea, 'Rotate secret');
    await endpointArea.getByRole('status').filter({ hasText: 'rotated' }).waitFor();
  });

  await shot('test-event', endpointArea, async () => {
    await showEndpoint();
    await click(endpointArea, 'Send test event');
    await endpointArea.getByRole('status').filter({ hasText: 'Test event sent' }).waitFor();
  });

  await shot('statistics', page.getByRole('region', { name: 'Statistics' }), showEndpoint);

  await shot('pause', endpointArea, async () => {
    await showEndpoint();
    await click(endpointArea, 'Pause');
    await endpointArea.getByRole('status').filter({ hasText: 'Paused' }).waitFor();
  });
  // Where there is no pause, there is nothing to resume.
  await click(endpointArea, 'Resume').catch(() => {});

  await shot('recover', page.getByRole('form', { name: 'Recover failed deliveries' }), showEndpoint);

  // Ten deliveries in a row fail: the endpoint is disabled, with what re-enables it.
  app.setReceiverMode('fail');
  for (let i = 0; i < 10; i++) await publish('click');
  await until(
    async () => !(await app.sender.getEndpoint(app.accountId, app.endpoint.id)).enabled,
    'the endpoint disabled',
  );
  app.setReceiverMode('ok');
  await shot('disabled', endpointArea, async () => {
    await page.reload();
    await showEndpoint();
    await control(endpointArea, 'Re-enable').first().waitFor();
  });
} finally {
  await browser.close();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`saved in ${out}:\n  ${taken.join('\n  ')}`);
if (skipped.length > 0) {
  console.error(
    `not taken (the dashboard has no such control; the guide still shows the old picture):\n  ${skipped.join('\n  ')}`,
  );
  process.exitCode = 1;
}

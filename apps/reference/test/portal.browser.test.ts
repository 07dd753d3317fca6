/**
 * Portal links and the framed dashboard in real Chromium (design D54, D55), against the sender's
 * own service app over HTTPS, as a platform would run it. Names under .test resolve to this machine
 * and the certificate is not checked, so the platform's app (app.test) and the service (hooks.test)
 * are two sites, as in production: the framed dashboard must work with the cookie it gets there.
 * A link signs in once and shows the endpoints; used again, it is refused in plain words; a page of
 * an allowed origin frames the dashboard, one of another origin cannot. Screenshots go to .artifacts/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDevelopmentCertificates,
  createSender,
  createSqliteStore,
  type Sender,
} from '@linkhooks/sender';
import { createServiceApp } from '@linkhooks/sender/api';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, hasChromium } from './tools.js';

const artifacts = fileURLToPath(new URL('../../../.artifacts', import.meta.url));
const TOKEN = 'svc_portal_browser_token';
const ENDPOINT_URL = 'https://127.0.0.1:9/hooks/portal';
const available = hasChromium();

let dir: string;
let store: ReturnType<typeof createSqliteStore>;
let sender: Sender;
let service: Server;
let platform: Server;
let browser: Browser;
let accountId: string;
let hooks: string; // the service, as browsers reach it
let app: string; // the platform's app, allowed to frame the dashboard
let other: string; // the same server under another name: an origin not allowed

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}
const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => {
    if (!server?.listening) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** What the platform's back end does: ask the service for a link with its token. */
function portalLink(): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ account_id: accountId });
    const req = request(
      `https://127.0.0.1:${new URL(hooks).port}/internal/v1/portal-sessions`,
      {
        method: 'POST',
        ca, // the test certificate's own authority, for 127.0.0.1
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          res.statusCode === 201
            ? resolve(JSON.parse(text).url)
            : reject(new Error(`${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
let ca: string;

beforeAll(async () => {
  if (!available) return;
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-portal-'));
  const certificates = await createDevelopmentCertificates({ validDays: 1 });
  const { key, cert } = certificates;
  ca = certificates.ca;
  store = createSqliteStore({ filename: join(dir, 'portal.db') });
  await store.migrate();
  sender = createSender({
    store,
    allowPrivateNetworks: true,
    masterKey: Buffer.alloc(32, 7).toString('base64'),
  });
  const created = await sender.createAccount({ name: 'Portal Co', plan: 'business' });
  accountId = created.account.id;
  await sender.createEndpoint(accountId, {
    url: ENDPOINT_URL,
    events: ['click'],
    description: 'opened by a portal link',
  });

  // Both ports are known before the service is made: its public URL and the allowed origin name them.
  let handle: RequestListener = (_req, res) => res.writeHead(503).end();
  service = createServer({ key, cert }, (req, res) => handle(req, res));
  const servicePort = await listen(service);
  platform = createServer({ key, cert }, async (req, res) => {
    const link = await portalLink();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html>
<meta charset="utf-8"><title>Platform app</title><h1>Platform app · ${req.headers.host}</h1>
<iframe src="${link}" style="width: 1200px; height: 700px; border: 1px solid #999"></iframe>`);
  });
  const platformPort = await listen(platform);
  hooks = `https://hooks.test:${servicePort}`;
  app = `https://app.test:${platformPort}`;
  other = `https://other.test:${platformPort}`;
  handle = createServiceApp({ sender, serviceToken: TOKEN, publicUrl: hooks, frameAncestors: [app] });

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--host-resolver-rules=MAP *.test 127.0.0.1',
      '--ignore-certificate-errors',
    ],
  });
});
afterAll(async () => {
  if (!available) return;
  await browser?.close();
  await close(platform);
  await close(service);
  await sender?.stop(0);
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const shot = (context: BrowserContext, name: string) =>
  context.pages()[0]!.screenshot({ path: join(artifacts, `portal-${name}.png`), fullPage: true });

describe.runIf(available)('portal links in Chromium', () => {
  let link: string;

  it('sign the user in once and show the account’s endpoints, the token gone from the address bar', async () => {
    link = await portalLink();
    expect(link.startsWith(`${hooks}/portal?token=lhp_`)).toBe(true);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    await page.getByText(ENDPOINT_URL).first().waitFor();
    expect(page.url()).toBe(`${hooks}/dashboard`);
    await shot(context, 'signed-in');
    // The link was a redirect, not a page: back goes to where the tab was before it.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await context.close();
  });

  it('refuse the same link a second time, in plain words', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 500 } });
    const page = await context.newPage();
    const answer = await page.goto(link);
    expect(answer?.status()).toBe(401);
    await page.getByRole('heading', { name: 'This link cannot sign you in' }).waitFor();
    const text = await page.locator('main').textContent();
    expect(text).toMatch(/already been used/);
    expect(text).toMatch(/Go back to the app you came from/);
    expect(await page.getByRole('heading', { name: 'Endpoints' }).count()).toBe(0);
    await shot(context, 'used');
    await context.close();
  });

  it('show the dashboard in a frame of an allowed origin, another site', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    await page.goto(`${app}/`);
    const frame = page.frameLocator('iframe');
    await frame.getByRole('heading', { name: 'Endpoints' }).waitFor();
    await frame.getByText(ENDPOINT_URL).first().waitFor();
    // The session cookie is kept for this embedding site only.
    const cookies = await context.cookies(hooks);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: 'linkhooks_session',
      sameSite: 'None',
      secure: true,
      httpOnly: true,
    });
    await shot(context, 'embedded');
    await context.close();
  });

  it('refuse to show it in a frame of an origin not allowed', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    const refused = new Promise<string>((resolve) => {
      page.on('console', (message) => {
        if (/frame-ancestors/.test(message.text())) resolve(message.text());
      });
    });
    await page.goto(`${other}/`);
    const message = await refused;
    expect(message).toContain(`Framing '${hooks}/' violates`);
    expect(message).toContain(`frame-ancestors 'self' ${app}`);
    expect(
      await page
        .frameLocator('iframe')
        .getByRole('heading', { name: 'This link cannot sign you in' })
        .count(),
    ).toBe(0);
    expect(await page.frameLocator('iframe').getByRole('heading', { name: 'Endpoints' }).count()).toBe(0);
    await shot(context, 'blocked');
    await context.close();
  });
});

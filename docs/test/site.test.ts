/**
 * The built site (`pnpm --filter @linkhooks/docs build`, run by the test command first): no broken
 * link or anchor, every guide renders in real Chromium with its code blocks and copy buttons, and
 * every page loads there with no script error and none of the site's files missing.
 * Screenshots of the first pages a reader meets, at 1280 and 390 px, are saved to .artifacts/.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasTool } from './tools.js';

const dist = fileURLToPath(new URL('../.vitepress/dist', import.meta.url));
const artifacts = fileURLToPath(new URL('../../.artifacts', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const GUIDES = [
  'guide/quickstart',
  'guide/express',
  'guide/fastify',
  'guide/next-app-router',
  'guide/next-pages-router',
  'guide/hono',
  'guide/node-http',
  'guide/edge',
  'guide/verify-without-sdk',
  'guide/idempotency',
  'guide/standard-webhooks',
  'guide/retries',
  'guide/secret-rotation',
  'guide/troubleshooting',
];

function htmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return htmlFiles(path);
    return extname(name) === '.html' ? [path] : [];
  });
}

const idsCache = new Map<string, Set<string>>();
function idsOf(file: string): Set<string> {
  let ids = idsCache.get(file);
  if (!ids) {
    ids = new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));
    idsCache.set(file, ids);
  }
  return ids;
}

/** The file a site-internal URL serves, as VitePress's static output lays them out. */
function target(fromFile: string, href: string): string | null {
  const [pathPart] = href.split(/[?#]/);
  let path = pathPart!.startsWith('/') ? join(dist, pathPart!) : join(fromFile, '..', pathPart!);
  path = normalize(decodeURIComponent(path));
  for (const candidate of [path, `${path}.html`, join(path, 'index.html')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

describe('the built docs site', () => {
  beforeAll(() => {
    if (!existsSync(join(dist, 'index.html'))) {
      throw new Error(
        `no built site at ${dist}: run "pnpm --filter @linkhooks/docs build" first (pnpm test does)`,
      );
    }
  });

  it('has no broken link or anchor', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of htmlFiles(dist)) {
      const html = readFileSync(file, 'utf8');
      for (const [, href] of html.matchAll(/\s(?:href|src)="([^"]+)"/g)) {
        if (!href || /^(https?:|mailto:|data:|javascript:)/.test(href) || href.startsWith('//')) continue;
        checked++;
        const [, anchor] = href.split('#');
        const file2 = href.startsWith('#') ? file : target(file, href);
        if (!file2) broken.push(`${relative(dist, file)} → ${href}`);
        else if (anchor && !idsOf(file2).has(decodeURIComponent(anchor))) {
          broken.push(`${relative(dist, file)} → ${href} (no #${anchor})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(broken).toEqual([]);
  });

  it('builds every guide and both references', () => {
    for (const page of [
      ...GUIDES,
      'reference/events',
      'reference/api',
      'guide/dashboard',
      'platform/runbook',
      'platform/getting-started',
    ]) {
      expect(existsSync(join(dist, `${page}.html`)), page).toBe(true);
    }
  });
});

describe('the docs in Chromium', () => {
  const available = hasTool(CHROMIUM);
  let server: Server;
  let origin: string;
  let browser: Awaited<ReturnType<typeof chromium.launch>>;
  // One tab for every page, each loaded as a new document: a new tab for each started a renderer
  // process of its own, and loaded the site's scripts afresh, for half the file's CPU.
  let tab: Awaited<ReturnType<typeof browser.newPage>>;
  /**
   * What went wrong in the tab since `load` opened its page: an uncaught script error, or any of
   * the site's files answered with an error (the page itself, which a 404 would otherwise pass off
   * as a short page that fits any width, or a script chunk it fetches as it runs).
   */
  const problems: string[] = [];

  beforeAll(async () => {
    if (!available) return;
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const file = target(join(dist, 'index.html'), url.pathname);
      if (!file) return void res.writeHead(404).end('not found');
      const types: Record<string, string> = {
        '.html': 'text/html',
        '.js': 'text/javascript',
        '.css': 'text/css',
        '.svg': 'image/svg+xml',
        '.json': 'application/json',
      };
      res
        .writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' })
        .end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    tab = await browser.newPage();
    tab.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    tab.on('response', (response) => {
      if (response.status() >= 400 && response.url().startsWith(`${origin}/`)) {
        problems.push(`${response.status()} for ${response.url().slice(origin.length)}`);
      }
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
  });

  // The first pages a reader meets, at a laptop's and a phone's width: nothing wider than the
  // window, and at 1280 px a text column wide enough for a shell line (it was 624 px beside the
  // outline). Screenshots go to .artifacts/ to be looked at.
  const FIRST_PAGES = [
    ['home', ''],
    ['quickstart', 'guide/quickstart.html'],
    ['platform', 'platform/getting-started.html'],
  ] as const;
  it
    .runIf(available)
    .each(FIRST_PAGES.flatMap(([name, path]) => [1280, 390].map((w) => [name, path, w] as const)))(
    '%s (/%s) fits %i px wide',
    async (name, path, width) => {
      await tab.setViewportSize({ width, height: 900 });
      await load(path);
      expect(problems).toEqual([]);
      const layout = await tab.evaluate(() => ({
        overflow: document.documentElement.scrollWidth - window.innerWidth,
        text: document.querySelector('.vp-doc')?.getBoundingClientRect().width ?? null,
        // Shell lines wrap rather than hide their end behind a scroll.
        cutCommands: Array.from(
          document.querySelectorAll(
            '.vp-doc div.language-sh pre, .vp-doc div.language-bash pre, .vp-doc div.language-shell pre',
          ),
          (pre) => pre.scrollWidth - pre.clientWidth,
        ).filter((hidden) => hidden > 1).length,
      }));
      expect(layout.overflow).toBeLessThanOrEqual(0);
      expect(layout.cutCommands).toBe(0);
      if (width === 1280 && layout.text !== null) expect(layout.text).toBeGreaterThanOrEqual(800);
      mkdirSync(artifacts, { recursive: true });
      await tab.screenshot({ path: join(artifacts, `docs-${name}-${width}.png`), fullPage: false });
    },
  );

  /** Opens the site's `path` in the tab as a new document, once its network is idle; `problems` starts over. */
  async function load(path: string) {
    problems.length = 0;
    if (!(await tab.goto(`${origin}/${path}`, { waitUntil: 'networkidle' })))
      problems.push(`no answer for /${path}`);
  }

  it.runIf(available).each(GUIDES)('%s renders with its code blocks and copy buttons', async (page) => {
    await tab.setViewportSize({ width: 1366, height: 900 });
    await load(`${page}.html`);
    expect(problems).toEqual([]);
    await tab.locator('.vp-doc h1').first().waitFor();
    const blocks = await tab.locator('.vp-doc div[class*="language-"]').count();
    const copies = await tab.locator('.vp-doc div[class*="language-"] button.copy').count();
    expect(blocks).toBeGreaterThan(0);
    expect(copies).toBe(blocks);
    const code = await tab.locator('.vp-doc div[class*="language-"] pre code').first().textContent();
    expect((code ?? '').trim().length).toBeGreaterThan(10);
    if (page === 'guide/quickstart') {
      mkdirSync(artifacts, { recursive: true });
      await tab.screenshot({ path: join(artifacts, 'docs-quickstart.png'), fullPage: true });
    }
    expect(problems).toEqual([]); // nor while the checks above ran
  });

  // Every other page the build wrote (the home page, the dashboard guide, the platform's pages and
  // the references): each loads with no script error and none of the site's files missing.
  it.runIf(available)('loads every other page without a script error or a missing file', async () => {
    const others = htmlFiles(dist)
      .map((file) => relative(dist, file))
      .filter((path) => path !== '404.html' && !GUIDES.includes(path.replace(/\.html$/, '')));
    expect(others.length).toBeGreaterThanOrEqual(7);
    const found: string[] = [];
    for (const path of others) {
      await load(path);
      found.push(...problems.map((problem) => `${path}: ${problem}`));
    }
    expect(found).toEqual([]);
  });
});

/**
 * The dashboard served by the service: its TypeScript is bundled with esbuild when the app starts
 * (a few tens of milliseconds), so there is no build step to forget and nothing is fetched at
 * run time. Preact is bundled in; the page loads one script and one stylesheet from this origin.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import express, { type Router } from 'express';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export async function dashboardRouter(): Promise<Router> {
  const bundle = await build({
    entryPoints: [here('../dashboard/src/main.tsx')],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  const html = readFileSync(here('../dashboard/index.html'), 'utf8');
  const css = readFileSync(here('../dashboard/style.css'), 'utf8');
  const router = express.Router();
  // The page runs only its own script and style: nothing inline, nothing from elsewhere.
  const security = {
    'content-security-policy':
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  router.get(['/', '/dashboard', '/dashboard/'], (_req, res) => {
    res.set(security).type('html').send(html);
  });
  router.get('/dashboard/app.js', (_req, res) => {
    res.set(security).type('text/javascript').send(script);
  });
  router.get('/dashboard/style.css', (_req, res) => {
    res.set(security).type('text/css').send(css);
  });
  return router;
}

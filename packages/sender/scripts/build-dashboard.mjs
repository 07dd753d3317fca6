// Bundles the dashboard (Preact, TypeScript, uPlot) into dist/dashboard with esbuild, beside the page
// and one stylesheet (uPlot's rules, then ours): the service serves these three files and nothing else.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('../dist/dashboard/');
mkdirSync(out, { recursive: true });
const result = await build({
  entryPoints: [here('../dashboard/src/main.tsx')],
  bundle: true,
  write: false,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
writeFileSync(`${out}app.js`, result.outputFiles[0].text);
copyFileSync(here('../dashboard/index.html'), `${out}index.html`);
const uplotCss = createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css');
writeFileSync(
  `${out}style.css`,
  `${readFileSync(uplotCss, 'utf8')}\n${readFileSync(here('../dashboard/style.css'), 'utf8')}`,
);
console.log(
  `dashboard: dist/dashboard/app.js (${Math.round(result.outputFiles[0].contents.length / 1024)} KiB)`,
);

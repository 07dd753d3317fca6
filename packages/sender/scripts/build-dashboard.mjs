// Bundles the dashboard (Preact, TypeScript) into dist/dashboard with esbuild, beside the page and
// its stylesheet: the service serves these three files and nothing else for it.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
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
copyFileSync(here('../dashboard/style.css'), `${out}style.css`);
console.log(
  `dashboard: dist/dashboard/app.js (${Math.round(result.outputFiles[0].contents.length / 1024)} KiB)`,
);

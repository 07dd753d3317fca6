// Bundles the dashboard (Preact, TypeScript) into dist/dashboard with esbuild, beside the page and
// one stylesheet (uPlot's rules, then ours). uPlot is split into a chunk of its own, loaded by the
// endpoint page only: the service serves these files and nothing else.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('../dist/dashboard/');
mkdirSync(out, { recursive: true });
for (const old of readdirSync(out).filter((f) => f.startsWith('chunk-'))) rmSync(`${out}${old}`);
const result = await build({
  entryPoints: { app: here('../dashboard/src/main.tsx') },
  outdir: out,
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  write: false,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
for (const file of result.outputFiles) writeFileSync(file.path, file.contents);
copyFileSync(here('../dashboard/index.html'), `${out}index.html`);
const uplotCss = createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css');
writeFileSync(
  `${out}style.css`,
  `${readFileSync(uplotCss, 'utf8')}\n${readFileSync(here('../dashboard/style.css'), 'utf8')}`,
);
const sizes = result.outputFiles.map(
  (f) => `${f.path.slice(out.length)} ${Math.round(f.contents.length / 1024)} KiB`,
);
console.log(`dashboard: dist/dashboard/ ${sizes.join(', ')}`);

// `pnpm test`: the whole suite, from a fresh clone. Installs, builds (the docs site too), lints,
// type-checks, runs every vitest project, then checks every package's published shape (publint,
// attw). Suites that need Redis, PostgreSQL, Chromium or the Go, Ruby and PHP toolchains skip with
// a loud notice off CI and fail under CI=true (.ci/run installs the Debian packages).
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { install, pnpm, pnpmTogether, root } from './lib.mjs';

const started = Date.now();
install();
pnpm(['build'], { label: 'pnpm build' });
// The docs site (references generated from the built packages, then the VitePress build that the
// docs' tests check for broken links and render in Chromium), the lint and the type checks, at once:
// each leaves a core idle part of its time (one after another 61 s, together 44 s).
const checked = await pnpmTogether([
  { args: ['--filter', '@linkhooks/docs', 'build'], label: 'docs build (vitepress)' },
  { args: ['exec', 'biome', 'check', '.'], label: 'biome check (lint + format)' },
  { args: ['-r', 'run', 'typecheck'], label: 'tsc --noEmit (every package and the docs examples)' },
]);
if (checked !== 0) process.exit(checked);

mkdirSync(join(root, '.artifacts'), { recursive: true });
const report = join(root, '.artifacts', 'vitest.json');
const status = pnpm(
  ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
  {
    label: 'vitest run',
    allowFailure: true,
  },
);

const packed = await pnpmTogether(
  readdirSync(join(root, 'packages'))
    .filter((dir) => existsSync(join(root, 'packages', dir, 'package.json')))
    .flatMap((dir) => {
      const pkg = join(root, 'packages', dir);
      return [
        { args: ['exec', 'publint', '--strict', pkg], label: `publint packages/${dir}` },
        {
          args: ['exec', 'attw', '--pack', pkg, '--profile', 'node16', '--format', 'table-flipped'],
          label: `attw packages/${dir}`,
        },
      ];
    }),
);

let summary = 'vitest wrote no report';
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  summary = `${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`;
}
console.log(`\nSuite finished in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(summary);
// Every check ran to its end: the summary is printed whichever failed.
process.exitCode = packed || (status === 0 ? 0 : 1);

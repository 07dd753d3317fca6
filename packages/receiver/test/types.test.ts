/**
 * The event types as a customer's compiler sees them: test/fixtures/types/narrowing.ts, importing
 * the built package by name, compiled with tsc as ESM and as CommonJS under `node16` and under
 * `bundler`. It proves `if (ev.event === 'click') ev.data.click_id` is a `string`.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
const pkg = fileURLToPath(new URL('..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/types/narrowing.ts', import.meta.url));

// A customer's folder: the package under node_modules by its name, resolved through `exports`.
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-types-'));
mkdirSync(join(dir, 'node_modules', '@linkhooks'), { recursive: true });
symlinkSync(pkg, join(dir, 'node_modules', '@linkhooks', 'receiver'), 'dir');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function compile(file: string, options: string[]) {
  copyFileSync(fixture, join(dir, file));
  const flags = [
    '--noEmit',
    '--strict',
    '--types',
    'node',
    '--typeRoots',
    join(pkg, '../../node_modules/@types'),
  ];
  return run(process.execPath, [tsc, ...flags, ...options, join(dir, file)], { cwd: dir }).then(
    () => '',
    (error: { stdout: string }) => error.stdout,
  );
}

// Each declaration file is checked whole once: `bundler` reads the same `import` declarations as
// node16's ESM, so it checks only the customer's file against them (`--skipLibCheck`, as `tsc
// --init` sets it), which takes a third of the time of checking Node's and zod's declarations again.
it.each([
  ['node16, ESM', 'narrowing.mts', ['--module', 'node16', '--moduleResolution', 'node16']],
  ['node16, CommonJS', 'narrowing.cts', ['--module', 'node16', '--moduleResolution', 'node16']],
  ['bundler', 'narrowing.ts', ['--module', 'esnext', '--moduleResolution', 'bundler', '--skipLibCheck']],
])(
  'events narrow by name (%s)',
  async (_, file, options) => {
    expect(await compile(file, options)).toBe('');
  },
  // A compile is seconds of one core: with the suite's other files on both cores, more than 30.
  90_000,
);

/**
 * `linkhooks-sender` loads what a command runs once its command line is read: `--help` and a usage
 * error load none of the engine, the stores' drivers or the HTTP service, `migrate` only the
 * stores, and the accounts commands no HTTP service. Each command is run with a module hook that names every package the process imports.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { runCli } from './helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-cli-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Packages only, not Node's own modules nor the CLI's files. Hooks run on a thread of their own:
// process._rawDebug writes to stderr at once from there, so no line is lost when the CLI exits.
const hook = join(dir, 'hook.mjs');
writeFileSync(
  hook,
  `import { builtinModules } from 'node:module';
export async function resolve(specifier, context, next) {
  if (!/^(\\.|\\/|node:|file:)/.test(specifier) && !builtinModules.includes(specifier)) {
    process._rawDebug('linkhooks-test-loaded ' + specifier);
  }
  return next(specifier, context);
}
`,
);
const register = join(dir, 'register.mjs');
writeFileSync(
  register,
  `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`,
);

/** The packages `args` loaded, and its exit code. */
async function loaded(args: string[]) {
  const options = [process.env.NODE_OPTIONS, `--import=${pathToFileURL(register).href}`];
  const run = await runCli(args, { NODE_OPTIONS: options.filter(Boolean).join(' ') });
  const packages = new Set(
    run.stderr
      .split('\n')
      .filter((line) => line.startsWith('linkhooks-test-loaded '))
      .map((line) => line.slice('linkhooks-test-loaded '.length)),
  );
  return { code: run.code, packages: [...packages].sort() };
}

const STORES = ['better-sqlite3', 'pg'];
const SERVICE = ['@opentelemetry/api', 'express', 'pino', 'prom-client', 'undici'];
const WIRE = ['@linkhooks/protocol', 'zod'];

it('answers --help and a usage error without loading the engine, the stores or the service', async () => {
  for (const args of [['--help'], ['serve', '--port', 'eighty'], ['frobnicate']]) {
    const { code, packages } = await loaded(args);
    expect(code, args.join(' ')).toBe(args[0] === '--help' ? 0 : 2);
    expect(
      packages.filter((p) => [...STORES, ...SERVICE, ...WIRE].includes(p)),
      args.join(' '),
    ).toEqual([]);
  }
});

it('migrates with the store alone, and runs the accounts commands without the HTTP service', async () => {
  const db = `sqlite:${join(dir, 'm.db')}`;
  const migrate = await loaded(['migrate', '--db', db]);
  expect(migrate.code).toBe(0);
  // The hook sees what is loaded: the store's driver is.
  expect(migrate.packages).toContain('better-sqlite3');
  expect(migrate.packages.filter((p) => SERVICE.includes(p))).toEqual([]);
  const accounts = await loaded(['accounts', 'list', '--db', db]);
  expect(accounts.code).toBe(0);
  expect(accounts.packages).toContain('better-sqlite3');
  expect(accounts.packages).not.toContain('express');
});

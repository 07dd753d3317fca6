/**
 * The quick start and the framework guides, followed as a reader does: in an empty folder, the
 * page's own npm commands (the SDK from its packed tarballs, everything else from the registry),
 * its code saved under the name it gives, started with its command, then its
 * `npx linkhooks trigger` line; the server must print what the page says the handler prints.
 * One installed folder serves the pages that run a server file; each page must still name every
 * package it imports. The Next.js guides share another, installed while the server pages run (Next
 * is most of the download); `npx next dev` serves one guide's route file at a time there (both
 * answer on the same path).
 *
 * Customers run Node.js 22 and 24 too: the pages whose server runs on Node.js run again on each,
 * the registry's build of that version first on the reader's PATH (its package holds `node` only:
 * the machine's npm and npx run on it). The Deno and Bun page runs with each of its start commands,
 * Deno's and Bun's first on the PATH the same way; `npx next dev` then runs Next on that Node.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  groupRunning,
  NODE_RUNTIMES,
  type Runtime,
  requireRuntime,
  runtimeCommand,
  runtimeVersion,
} from '@linkhooks/runtimes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importedPackages, type RunnablePage, type Runner, runnablePage } from './pages.js';
import { freePort, printedUntil } from './tools.js';

const PAGES = [
  'guide/quickstart.md',
  'guide/express.md',
  'guide/fastify.md',
  'guide/hono.md',
  'guide/node-http.md',
  'guide/idempotency.md',
  'guide/secret-rotation.md',
  'guide/standard-webhooks.md',
  'guide/next-app-router.md',
  'guide/next-pages-router.md',
  'guide/edge.md',
];

/** How a page is run: the runtime put first on the PATH, if not ours. */
interface Run {
  page: string;
  runtime?: Runtime;
}
/** The command a run's server starts with: the runtime's own (node for every Node). */
const runnerOf = ({ runtime }: Run) => (runtime ? runtimeCommand(runtime) : 'node') as Runner;
/** A page whose server runs on another runtime: the command its parts are read with. */
const READ_WITH: Record<string, Runner> = { 'guide/edge.md': 'deno' };
const label = (each: Run) =>
  each.runtime === undefined
    ? each.page
    : each.runtime.startsWith('node')
      ? `${each.page} on Node ${each.runtime.slice(4)}`
      : `${each.page} with ${runnerOf(each)}`;

const run = promisify(execFile);
const packages = fileURLToPath(new URL('../../packages', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

// The reader's shell, not this test run's: pnpm's npm_* variables would steer the reader's npm
// (a registry set in the environment is kept).
// npm_config_yes=false: an npx that would download a package it did not find refuses instead.
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k === 'npm_config_registry' || !/^(npm_|pnpm_)/i.test(k)),
  ),
  npm_config_yes: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  // Next's usage reports stay on this machine.
  NEXT_TELEMETRY_DISABLED: '1',
};

function registryReachable(): boolean {
  const ping = spawnSync('npm', ['ping'], { env, timeout: 20_000, encoding: 'utf8' });
  if (ping.status === 0) return true;
  const why = ping.stderr?.split('\n').find((line) => line.startsWith('npm error')) ?? ping.error;
  const message = `the npm registry is unreachable (npm ping: ${why})`;
  if (process.env.CI === 'true') throw new Error(`${message}: CI needs it to install the pages' packages.`);
  console.warn(`\n!!! SKIPPING the as-pasted guide checks: ${message}.\n`);
  return false;
}

/** The pnpm that runs this test, or the one the repository pins. */
function pnpm(args: string[], cwd: string) {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath)) return run(process.execPath, [execPath, ...args], { cwd });
  return run('npx', ['--yes', 'pnpm@10', ...args], { cwd });
}

/**
 * Resolves once no process of group `pid` runs: nothing tells when a server's own children end.
 * A zombie has ended (exited, its files closed) and only waits for init, which here reaps about
 * once a second, to collect it.
 */
async function groupGone(pid: number, what: string) {
  const deadline = Date.now() + 15_000;
  while (groupRunning(pid)) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A line the page prints, `…` standing for what changes on every run (ids). */
const printedPattern = (line: string) =>
  new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\S+')}$`,
    'm',
  );

const online = registryReachable();

/** A Next.js guide: its route file is served by Next's dev server. */
const isNext = (page: RunnablePage) => /\bnext dev$/.test(page.start);

/**
 * Makes `folder` as the pages' readers do: their setup commands, then one `npm install` of every
 * package they name (the SDK from `tarballs`).
 */
async function install(folder: string, pages: RunnablePage[], tarballs: string[]) {
  mkdirSync(folder);
  const wanted = new Set<string>();
  const commands = new Set<string>(); // every page says `npm init -y`: once is the same
  for (const page of pages) {
    for (const command of page.setup) if (!command.startsWith('npm install')) commands.add(command);
    for (const name of page.packages) wanted.add(name);
    // The TypeScript steps' type packages; the type check below runs this repository's tsc, and
    // tsx (which would fetch esbuild's binary) is not needed to check types.
    for (const name of page.typescript?.packages ?? [])
      if (name !== 'tsx' && name !== 'typescript') wanted.add(name);
  }
  for (const command of commands) await run('sh', ['-c', command], { cwd: folder, env });
  const names = [...wanted].flatMap((name) => (name === '@linkhooks/receiver' ? tarballs : [name]));
  // No page to install for: each page's test then fails with what its page lacks.
  if (names.length > 0) await run('npm', ['install', ...names], { cwd: folder, env, timeout: 240_000 });
}

describe.skipIf(!online)('the guides, followed as pasted', () => {
  // Made in beforeAll, which a skipped suite never runs (nor its afterAll, which removes it).
  let root = '';
  let project = '';
  let nextProject = '';
  let nextInstalled: Promise<void> | undefined;
  // Parsed here so a page that lacks a part fails its own test, not the setup of all of them.
  const parse = (page: string, runner: Runner) => {
    try {
      return runnablePage(page, runner);
    } catch (error) {
      return error as Error;
    }
  };
  const pages = new Map(PAGES.map((page) => [page, parse(page, READ_WITH[page] ?? 'node')]));
  const runs: Run[] = [
    ...PAGES.filter((page) => !READ_WITH[page]).map((page) => ({ page })),
    ...NODE_RUNTIMES.flatMap((runtime) =>
      PAGES.filter((page) => {
        const parsed = pages.get(page)!;
        return !READ_WITH[page] && !(parsed instanceof Error);
      }).map((page) => ({ page, runtime })),
    ),
    { page: 'guide/edge.md', runtime: 'deno' },
    { page: 'guide/edge.md', runtime: 'bun' },
  ];
  const bins = new Map(
    [...new Set(runs.flatMap((run) => run.runtime ?? []))].map((runtime) => [
      runtime,
      requireRuntime(runtime, 'the as-pasted runs'),
    ]),
  );

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'linkhooks-as-pasted-'));
    project = join(root, 'project');
    await Promise.all(
      ['receiver', 'protocol'].map((name) => {
        if (!existsSync(join(packages, name, 'dist')))
          throw new Error(`packages/${name} is not built: run the packages' build first.`);
        return pnpm(['pack', '--pack-destination', join(root, 'packs')], join(packages, name));
      }),
    );
    const tarballs = readdirSync(join(root, 'packs')).map((file) => join(root, 'packs', file));
    const parsed = [...pages.values()].filter((page): page is RunnablePage => !(page instanceof Error));
    await install(
      project,
      parsed.filter((page) => !isNext(page)),
      tarballs,
    );
    // Awaited by the Next pages' tests, which come after the others.
    nextProject = join(root, 'next');
    nextInstalled = install(nextProject, parsed.filter(isNext), tarballs);
    nextInstalled.catch(() => {});
  }, 300_000);

  afterAll(async () => {
    await nextInstalled?.catch(() => {});
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the same files type-check as TypeScript, with the quick start's TypeScript steps", async () => {
    const quickstart = pages.get('guide/quickstart.md')!;
    if (quickstart instanceof Error) throw quickstart;
    const steps = quickstart.typescript;
    expect(steps, 'the quick start gives TypeScript steps').toBeDefined();
    for (const command of steps!.setup.filter((c) => !c.startsWith('npm install')))
      await run('sh', ['-c', command], { cwd: project, env });
    const files: string[] = [];
    for (const [name, page] of pages) {
      if (page instanceof Error) continue;
      const dir = join(project, 'typescript', name.replace(/\W+/g, '-'));
      const file = join(dir, basename(page.file.name).replace(/\.mjs$/, '.ts'));
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, page.file.code);
      files.push(file);
    }
    const checked = await run(
      process.execPath,
      [tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--target', 'es2022', ...files],
      { cwd: project, env },
    ).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(checked.stdout).toBe('');
    expect('failed' in checked).toBe(false);
  });

  for (const each of runs) {
    const name = each.page;
    const bin = each.runtime ? bins.get(each.runtime) : undefined;
    // The first Next page may wait for its folder's install; Next's dev server then starts in
    // seconds and compiles the route on its first delivery.
    it.skipIf(bin === null)(label(each), { timeout: 300_000 }, async () => {
      const runner = runnerOf(each);
      const page = runner === (READ_WITH[name] ?? 'node') ? pages.get(name)! : parse(name, runner);
      if (page instanceof Error) throw page;
      // The reader's shell finds the runtime first on its PATH: on Node 22, `node server.mjs` and
      // the `npx linkhooks` line run on Node 22.
      const shellEnv = bin ? { ...env, PATH: `${bin}:${env.PATH}` } : env;
      if (each.runtime) {
        const { stdout } = await run('sh', ['-c', `${runtimeCommand(each.runtime)} --version`], {
          env: shellEnv,
        });
        expect(stdout).toContain(runtimeVersion(each.runtime));
      }
      for (const imported of importedPackages(page.file.code)) expect(page.packages).toContain(imported);
      if (isNext(page)) await nextInstalled;
      const cwd = isNext(page) ? nextProject : project;
      const saved = join(cwd, page.file.name);
      mkdirSync(dirname(saved), { recursive: true });
      writeFileSync(saved, page.file.code);

      const port = await freePort();
      // The page's start command as the reader's shell runs it, on a free port (pages say PORT
      // picks it; `deno serve` takes its --port); its own process group, so the shell and the
      // server stop together.
      const start = page.start.replace(/--port 3000\b/, `--port ${port}`);
      const server = spawn('sh', ['-c', start], {
        cwd,
        env: { ...shellEnv, PORT: String(port) },
        detached: true,
      });
      let printed = '';
      server.stdout!.on('data', (chunk) => {
        printed += chunk;
      });
      server.stderr!.on('data', (chunk) => {
        printed += chunk;
      });
      try {
        await printedUntil(server, () => printed, page.ready, `${start} did not start`, 60_000);
        const trigger = page.trigger.replace(/localhost:3000\b/, `localhost:${port}`);
        expect(trigger, 'the trigger line sends to the port the server uses').not.toBe(page.trigger);
        expect(existsSync(join(cwd, 'node_modules/.bin/linkhooks'))).toBe(true);
        const sent = await run('sh', ['-c', trigger], { cwd, env: shellEnv });
        expect(sent.stdout).toContain('✓ 200');
        expect(sent.stdout).toContain('{"received":true}');
        for (const line of page.printed)
          await printedUntil(
            server,
            () => printed,
            printedPattern(line),
            `the handler's output after ${page.trigger}`,
          );

        // The quick start and the Deno and Bun page say what another secret gets; the other
        // guides share the quick start's adapter core.
        if (name !== 'guide/quickstart.md' && name !== 'guide/edge.md') return;
        const handled = printed;
        const forged = await run('sh', ['-c', trigger.replace(/--secret \S+/, '--secret whsec_other')], {
          cwd: project,
          env: shellEnv,
        }).catch((error: { code: number; stdout: string }) => error);
        expect('code' in forged && forged.code).toBe(1);
        expect(forged.stdout).toContain('✗ 401');
        expect(printed).toBe(handled);
      } finally {
        if (server.exitCode === null && server.signalCode === null) {
          const exited = new Promise((resolve) => server.once('exit', resolve));
          process.kill(-server.pid!, 'SIGTERM');
          await exited;
        }
        // The shell exits first; Next's server process still writes its cache while it stops.
        await groupGone(server.pid!, `${page.start} did not stop`);
        // The next page's server must not find this one's route (the Next pages share a path).
        rmSync(saved);
      }
    });
  }
});

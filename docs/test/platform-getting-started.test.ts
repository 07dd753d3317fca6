/**
 * The platform getting-started page, run the way a reader runs it: the packages packed as npm
 * would publish them, an empty folder, and the page's own blocks in order — its shell commands as
 * one terminal session, its `receiver.js` saved as the page says. What differs from the page: the
 * install line names the packed files (and takes better-sqlite3's native build from the workspace,
 * or from the cache of builds for other Node.js versions, see below), and the two ports are free
 * ones, so that the test never meets another program on 8080 or 4443. It passes when the receiver
 * prints the line the page promises.
 *
 * Platforms run the service on Node.js 22 and 24 too: the page runs again on each, the registry's
 * build of that version (from @linkhooks/runtimes) first on the reader's PATH, so that the service,
 * the receiver and the machine's npm and npx run on it; its SQLite store's native part is compiled
 * for that version as npm does.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  NODE_RUNTIMES,
  type NodeRuntime,
  nativeBuild,
  requireRuntime,
  runtimeHome,
  runtimeVersion,
} from '@linkhooks/runtimes';
import { afterAll, beforeAll, it } from 'vitest';
import { freePort } from './tools.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = join(ROOT, 'docs/platform/getting-started.md');
const require = createRequire(import.meta.url);
const INSTALL = 'npm install @linkhooks/sender @linkhooks/receiver';

interface Block {
  lang: string;
  file?: string;
  code: string;
}

/** The page's fenced blocks in order, with the file name a block is to be saved as. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const m of markdown.matchAll(/^```(\w+)(?: \[([^\]\n]+)\])?\n([\s\S]*?)^```$/gm)) {
    blocks.push({ lang: m[1]!, ...(m[2] ? { file: m[2] } : {}), code: m[3]! });
  }
  return blocks;
}

const works: string[] = [];
const children: ChildProcess[] = [];
/** Stops the reader's terminal: the shell and what it started in the background. */
function stop(child: ChildProcess) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}
afterAll(() => {
  for (const child of children) stop(child);
  for (const work of works) rmSync(work, { recursive: true, force: true });
});

const RUNS: { runtime?: NodeRuntime; bin?: string | null }[] = [
  {},
  ...NODE_RUNTIMES.map((runtime) => ({
    runtime,
    bin: requireRuntime(runtime, 'the platform page'),
  })),
];

// better-sqlite3's native part: the workspace's build of the same version is copied in rather than
// compiled again (about a minute of one core that tests nothing of the page); another version is built as
// npm would.
const ADDON = 'better_sqlite3.node';
const sqlite = dirname(
  require.resolve('better-sqlite3/package.json', { paths: [join(ROOT, 'packages/sender')] }),
);
const sqliteVersion = (JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string })
  .version;

/**
 * better-sqlite3 built for each other Node.js, as npm would build it there: made before the runs,
 * which go on at once, so that a compile (about a minute of one core, the first time on a machine)
 * never holds the event loop while another run's programs wait to be read.
 */
const nativeBuilds = new Map<NodeRuntime, string>();
beforeAll(() => {
  for (const { runtime, bin } of RUNS)
    if (runtime && bin) nativeBuilds.set(runtime, nativeBuild(runtime, sqlite, ADDON));
}, 600_000);

/** Ports handed to a run: the runs go on at once, and none may be given one another was given. */
const handedOut = new Set<number>();
async function portOfItsOwn(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** The three packages packed as npm would publish them, once for every run of the page. */
let tarballs: string[] | undefined;
function packed(): string[] {
  if (tarballs) return tarballs;
  const packs = mkdtempSync(join(tmpdir(), 'linkhooks-platform-packs-'));
  works.push(packs);
  const names = ['protocol', 'receiver', 'sender'];
  for (const pkg of names) {
    execFileSync('npx', ['--yes', 'pnpm@10', 'pack', '--pack-destination', packs], {
      cwd: join(ROOT, 'packages', pkg),
      stdio: 'ignore',
    });
  }
  tarballs = names.map((p) => join(packs, `linkhooks-${p}-0.0.0.tgz`));
  return tarballs;
}

for (const { runtime, bin } of RUNS) {
  const on = runtime ? ` on Node ${runtime.slice(4)}` : '';
  // The runs at once: each waits on npm and on its programs far more than it computes.
  it.skipIf(bin === null).concurrent(
    `delivers a click to a local HTTPS receiver with only the commands on the page${on}`,
    async ({ expect }) => {
      const blocks = blocksOf(readFileSync(PAGE, 'utf8'));
      const shell = blocks.filter((b) => b.lang === 'sh');
      const receiver = blocks.find((b) => b.file === 'receiver.js');
      const promised = blocks.find((b) => b.lang === 'text')?.code.trim();
      expect(
        shell.some((b) => b.code.includes(INSTALL)),
        'the page installs both packages',
      ).toBe(true);
      expect(receiver, 'the page shows receiver.js').toBeDefined();
      expect(promised).toMatch(/^receiver: click clk_/);

      const work = mkdtempSync(join(tmpdir(), 'linkhooks-platform-page-'));
      works.push(work);
      const tarballs = packed();
      const apiPort = await portOfItsOwn();
      const receiverPort = await portOfItsOwn();
      // In one pass, so that a port written in never has the other's number replaced inside it.
      const ports = (code: string) =>
        code.replace(/\b(8080|4443)\b/g, (port) => String(port === '8080' ? apiPort : receiverPort));

      // The reader's terminal: each shell block in turn; receiver.js saved just before the block
      // that runs it, as the page orders them.
      // On another Node.js, the build made for it before the runs (nativeBuilds) is copied in too.
      // npm builds one in the folder when the packed sender asks for another version of the driver
      // than the workspace's, or the workspace has none built.
      const built = JSON.stringify(
        runtime ? nativeBuilds.get(runtime) : join(sqlite, 'build/Release', ADDON),
      );
      const install = [
        `npm_config_ignore_scripts=true npm install ${tarballs.join(' ')}`,
        `if [ "$(node -p 'require("./node_modules/better-sqlite3/package.json").version')" = "${sqliteVersion}" ] && [ -f ${built} ]; then`,
        '  mkdir -p node_modules/better-sqlite3/build/Release',
        `  cp ${built} node_modules/better-sqlite3/build/Release/${ADDON}`,
        'else',
        '  npm rebuild better-sqlite3',
        'fi',
      ].join('\n');
      let script = 'set -e\n';
      for (const block of blocks) {
        if (block.file) {
          script += `cat > ${block.file} <<'LINKHOOKS_PAGE_FILE'\n${ports(block.code)}LINKHOOKS_PAGE_FILE\n`;
        } else if (block.lang === 'sh') {
          script += `${ports(block.code.replace(INSTALL, install))}\n`;
        }
      }
      script += 'wait\n';

      // A reader's terminal: their PATH and home (where npm keeps its settings and cache), nothing of
      // the test runner's environment.
      // npm is told to build from source, as it would after failing to download a prebuilt binary:
      // nothing is downloaded here, and the attempt would only cost time.
      const env = {
        PATH: bin ? `${bin}:${process.env.PATH ?? ''}` : (process.env.PATH ?? ''),
        HOME: process.env.HOME ?? work,
        // The machine's own trust for reaching the registry (a proxy's authority), as the reader's
        // shell has it: Node.js builds other than this machine's read only their bundled ones.
        ...(process.env.NODE_EXTRA_CA_CERTS && { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }),
        npm_config_build_from_source: 'true',
        ...(runtime && { npm_config_nodedir: runtimeHome(runtime)! }),
      };
      if (runtime) {
        const version = execFileSync('node', ['--version'], { env, encoding: 'utf8' });
        expect(version.trim()).toBe(`v${runtimeVersion(runtime)}`);
      }
      const child = spawn('bash', ['-c', script], {
        cwd: work,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (c: Buffer) => {
        output += c;
      });
      child.stderr!.on('data', (c: Buffer) => {
        output += c;
      });
      children.push(child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const arrived = new Promise<void>((resolve) => {
        const check = () => output.includes(promised!) && resolve();
        child.stdout!.on('data', check);
      });
      let errors = '';
      const crashed = new Promise<void>((resolve) => {
        child.stderr!.on('data', (c: Buffer) => {
          errors += c;
          if (/^Node\.js v\d+\.\d+\.\d+$/m.test(errors)) resolve();
        });
      });
      // Stopped whatever the outcome: nothing of this run outlives it.
      try {
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          arrived.then(() => 'delivered' as const),
          exited.then((code) => `the commands stopped (exit ${code})`),
          // A program the page started in the background died (Node.js ends its report of an
          // uncaught error with its version): the shell would wait for it to answer until the end.
          crashed.then(() => 'a program the page started crashed'),
          new Promise<string>((resolve) => {
            timer = setTimeout(() => resolve('no delivery within 6 minutes'), 360_000);
          }),
        ]);
        clearTimeout(timer);
        expect(outcome, output.slice(-4000)).toBe('delivered');
        // The ingest answered 202 with the event's id, and nothing secret reached the terminal.
        expect(output).toMatch(/"event_id":"evt_/);
        expect(output).not.toMatch(/BEGIN (RSA )?PRIVATE KEY/);
      } finally {
        stop(child);
      }
    },
    420_000,
  );
}

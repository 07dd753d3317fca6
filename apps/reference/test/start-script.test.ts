/**
 * `pnpm start`'s wrapper (scripts/start.mjs) passes on the signals that stop the app: a SIGTERM to
 * the wrapper alone, as a process manager or `kill` sends it, stops the app and ends with its code.
 * With the app run by spawnSync, the app went on running, its ports and database lock held. And it
 * builds the packages only when they changed since its last build.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const LIB = fileURLToPath(new URL('../../../scripts/lib.mjs', import.meta.url));

/** Stands in for the app: says it is up, and on SIGTERM says so and ends with code 0. */
const APP = `
process.on('SIGTERM', () => { console.log('stopping ' + process.pid); process.exit(0); });
console.log('ready ' + process.pid);
setInterval(() => {}, 1000);`;

const WRAPPER = `
const { runUntilStopped } = await import(${JSON.stringify(LIB)});
process.exit(await runUntilStopped(process.execPath, ['-e', ${JSON.stringify(APP)}], { label: 'app' }));`;

describe("pnpm start's wrapper", () => {
  it('stops the app when it is sent SIGTERM alone, and ends with the app’s code', async () => {
    const wrapper = spawn(process.execPath, ['--input-type=module', '-e', WRAPPER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    const said = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m) resolve(m);
        };
        wrapper.stdout.on('data', (chunk: Buffer) => {
          out += chunk;
          check();
        });
        wrapper.once('exit', () => reject(new Error(`the wrapper ended first:\n${out}`)));
      });
    const [, pid] = await said(/ready (\d+)/);
    const exited = new Promise<number | null>((resolve) => wrapper.once('exit', (code) => resolve(code)));
    wrapper.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain(`stopping ${pid}`);
    expect(() => process.kill(Number(pid), 0)).toThrow(); // the app is gone
  });
});

describe("pnpm start's build", async () => {
  const { buildIfChanged } = (await import(LIB)) as {
    buildIfChanged: (packagesDir: string, build: () => void) => boolean;
  };
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-start-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const packages = join(dir, 'packages');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  const write = (path: string, text: string) => {
    mkdirSync(join(packages, path, '..'), { recursive: true });
    writeFileSync(join(packages, path), text);
  };
  let builds = 0;
  /** Stands in for a build: each package's output anew, and files beside it as the protocol's build writes. */
  const build = () => {
    builds++;
    for (const pkg of ['a', 'b']) {
      rmSync(join(packages, pkg, 'dist'), { recursive: true, force: true });
      write(`${pkg}/dist/index.js`, `built ${builds}`);
    }
    write('a/schemas/event.json', `{"written":${builds}}`);
  };
  const start = () => buildIfChanged(packages, build);

  it('builds the first time, then only when a source changed, or another build replaced an output', () => {
    writeFileSync(join(dir, '.gitignore'), 'dist/\nschemas/\n');
    write('a/package.json', '{}');
    write('a/src/index.ts', 'export const a = 1;');
    write('b/package.json', '{}');
    write('b/src/index.ts', 'export const b = 1;');
    git('init', '-q');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'sources');
    expect([start(), builds]).toEqual([true, 1]);
    // Nothing changed: the files a build writes beside its output change nothing.
    expect([start(), builds]).toEqual([false, 1]);
    write('b/src/index.ts', 'export const b = 2;');
    expect([start(), builds]).toEqual([true, 2]);
    expect([start(), builds]).toEqual([false, 2]);
    write('a/src/new.ts', 'export {};'); // a new file, not yet in git
    expect([start(), builds]).toEqual([true, 3]);
    // Another build (pnpm build, pnpm test) of changed sources, then the change undone: the output
    // is not what this start would build, so it builds again.
    write('b/src/index.ts', 'export const b = 3;');
    build();
    write('b/src/index.ts', 'export const b = 2;');
    expect([start(), builds]).toEqual([true, 5]);
    rmSync(join(packages, 'b', 'dist'), { recursive: true });
    expect([start(), builds]).toEqual([true, 6]);
    expect([start(), builds]).toEqual([false, 6]);
  });
});

/**
 * `pnpm start`'s wrapper (scripts/start.mjs) passes on the signals that stop the app: a SIGTERM to
 * the wrapper alone, as a process manager or `kill` sends it, stops the app and ends with its code.
 * With the app run by spawnSync, the app went on running, its ports and database lock held. And it
 * builds the packages only when they changed since its last build.
 */
import { spawn } from 'node:child_process';
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
    buildIfChanged: (packagesDir: string, stamp: string, build: () => void) => boolean;
  };
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-start-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const packages = join(dir, 'packages');
  const stamp = join(dir, 'built');
  const write = (path: string, text: string) => {
    mkdirSync(join(packages, path, '..'), { recursive: true });
    writeFileSync(join(packages, path), text);
  };
  let builds = 0;
  /** Stands in for `pnpm build`: writes each package's output, and a file beside it as the protocol's build does. */
  const build = () => {
    builds++;
    write('a/dist/index.js', `built ${builds}`);
    write('b/dist/index.js', `built ${builds}`);
    write('a/schemas/event.json', '{"same":"every build"}');
  };
  const start = () => buildIfChanged(packages, stamp, build);

  it('builds the first time, then only after a package’s file changed or an output went', () => {
    write('a/package.json', '{}');
    write('a/src/index.ts', 'export const a = 1;');
    write('b/package.json', '{}');
    write('b/src/index.ts', 'export const b = 1;');
    expect([start(), builds]).toEqual([true, 1]);
    // Nothing changed: the files the build wrote again, the same, change nothing.
    expect([start(), builds]).toEqual([false, 1]);
    write('b/src/index.ts', 'export const b = 2;');
    expect([start(), builds]).toEqual([true, 2]);
    expect([start(), builds]).toEqual([false, 2]);
    write('a/src/new.ts', 'export {};');
    expect([start(), builds]).toEqual([true, 3]);
    rmSync(join(packages, 'b', 'dist'), { recursive: true });
    expect([start(), builds]).toEqual([true, 4]);
    expect([start(), builds]).toEqual([false, 4]);
  });
});

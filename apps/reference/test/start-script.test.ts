/**
 * `pnpm start`'s wrapper (scripts/start.mjs) passes on the signals that stop the app: a SIGTERM to
 * the wrapper alone, as a process manager or `kill` sends it, stops the app and ends with its code.
 * With the app run by spawnSync, the app went on running, its ports and database lock held.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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

/**
 * With the sample receiver failing, the command line reports each failed attempt as it happens,
 * each failed delivery with its endpoint's count toward the disable rule, and then the disabling:
 * the user does not wait in silence until the endpoint is disabled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killLeftovers, runCli } from './run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-reference-failures-'));
});
afterEach(async () => {
  const left = await killLeftovers();
  rmSync(dir, { recursive: true, force: true });
  expect(left, 'a test left the app running').toBe(0);
});

describe('the command line, receiver failing', () => {
  it('prints each failed attempt, the failed deliveries in a row, then the disabling', async () => {
    // 10.5 hours × 0.00002 ≈ 0.8 s for a delivery's six attempts.
    const run = runCli([
      ...['--db', join(dir, 'reference.db'), '--port', '0', '--receiver-port', '0'],
      ...['--receiver-mode', 'fail', '--rate', '20', '--time-scale', '0.00002'],
    ]);
    const [, endpointId] = await run.waitFor(/endpoint +(ep_\w+),/);
    await run.waitFor(/disabled after 10 failed deliveries in a row/);
    run.child.kill('SIGTERM');
    await run.exited;

    const lines = run.stdout().split('\n');
    const at = (pattern: RegExp) => lines.findIndex((l) => pattern.test(l));
    for (const n of [1, 2, 3, 4, 5])
      expect(at(new RegExp(`attempt ${n} of 6 failed \\(HTTP 500\\); next in`))).toBeGreaterThan(-1);
    const disabled = at(new RegExp(`endpoint ${endpointId} disabled after 10 failed deliveries in a row`));
    // Counts are read from the store as each delivery fails: they only grow, and come before the disabling.
    const counted = new RegExp(
      `failed after 6 attempts \\(HTTP 500\\); endpoint ${endpointId}: (\\d+) of 10 failed`,
    );
    const counts = lines.flatMap((l, i) => {
      const m = l.match(counted);
      return m ? [{ n: Number(m[1]), i }] : [];
    });
    expect(counts.filter((c) => c.n < 10 && c.i < disabled).length).toBeGreaterThan(0);
    expect(counts.map((c) => c.n)).toEqual(counts.map((c) => c.n).sort((a, b) => a - b));
    expect(at(/attempt 1 of 6 failed/)).toBeLessThan(counts[0]!.i);
    expect(run.stdout()).not.toMatch(/receiver: verified/);
  });
});

/**
 * The command line started as `pnpm start` starts it, in child processes: a second run against a
 * database in use, a busy port, or a file the app did not make is refused in one sentence, exits
 * non-zero and changes nothing on disk; a run's database is removed when it stops, and one left by a
 * killed run is kept under a new name.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killLeftovers, runCli, started } from './run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-reference-start-'));
});
afterEach(async () => {
  const left = await killLeftovers();
  rmSync(dir, { recursive: true, force: true });
  expect(left, 'a test left the app running').toBe(0);
});

const FREE_PORTS = ['--port', '0', '--receiver-port', '0', '--rate', '0'];

/** Refused: exit code 1 and one line on stderr, with no stack trace. */
async function refusal(run: ReturnType<typeof runCli>) {
  const started = run.waitFor(/keys: /).then(() => {
    throw new Error(`the app started instead of refusing:\n${run.stdout()}`);
  });
  const { code } = await Promise.race([run.exited, started]);
  expect(code).toBe(1);
  const lines = run.stderr().trim().split('\n');
  expect(lines, run.stderr()).toHaveLength(1);
  expect(run.stderr()).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

async function stop(run: ReturnType<typeof runCli>) {
  run.child.kill('SIGTERM');
  expect(await run.exited).toEqual({ code: 0, signal: null });
}

function busyPort(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('a flag out of range', () => {
  it('is a usage error in one line (exit 2), a port above 65535 included', async () => {
    for (const [flag, value] of [
      ['--port', '70000'],
      ['--receiver-port', '1.5'],
      ['--rate', 'fast'],
    ] as const) {
      const run = runCli(['--db', join(dir, 'never.db'), ...FREE_PORTS, flag, value]);
      expect((await run.exited).code, flag).toBe(2);
      expect(run.stderr().trim().split('\n'), run.stderr()).toHaveLength(1);
      expect(run.stderr()).toMatch(new RegExp(`^reference: ${flag} must be `));
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('a second start', () => {
  it('against a running app is refused, and the running one keeps its database', async () => {
    const db = join(dir, 'runs', 'reference.db'); // in a folder the first run makes
    const first = runCli(['--db', db, ...FREE_PORTS]);
    const { serviceUrl, apiKey, endpointId } = await started(first);

    const second = runCli(['--db', db, ...FREE_PORTS]);
    const line = await refusal(second);
    expect(line).toBe(
      `reference: another reference app (pid ${first.child.pid}) is using ${db}; stop it first, or pass ` +
        '--db with another file (and --port and --receiver-port with free ports) to run a second one.',
    );

    expect(existsSync(db)).toBe(true);
    expect(readFileSync(`${db}.lock`, 'utf8').trim()).toBe(String(first.child.pid));
    expect((await fetch(`${serviceUrl}/healthz`)).status).toBe(200);
    const endpoint = await fetch(`${serviceUrl}/v1/endpoints/${endpointId}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(endpoint.status).toBe(200);

    await stop(first);
    expect(readdirSync(dir), 'the run removes the database it made, its lock and folder').toEqual([]);
  });

  it('on a busy service port names the port and the flag, and leaves nothing behind', async () => {
    const server = await busyPort();
    const port = (server.address() as { port: number }).port;
    try {
      const run = runCli(['--db', join(dir, 'reference.db'), '--port', String(port), '--receiver-port', '0']);
      expect(await refusal(run)).toBe(
        `reference: port ${port} is in use by another program; stop it, or pass --port with a free port.`,
      );
      expect(readdirSync(dir)).toEqual([]);
      // Nor the folders it made for a database in a new one.
      const nested = runCli(['--db', join(dir, 'new', 'folder', 'reference.db'), '--port', String(port)]);
      expect(await refusal(nested)).toMatch(`port ${port} is in use`);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("on a busy receiver port names --receiver-port and leaves the running app's database alone", async () => {
    const db = join(dir, 'reference.db');
    const first = runCli(['--db', db, ...FREE_PORTS]);
    const { serviceUrl } = await started(first);
    const [, receiverPort] = await first.waitFor(/sample receiver +https:\/\/localhost:(\d+)\//);

    const other = join(dir, 'other.db');
    const second = runCli(['--db', other, '--port', '0', '--receiver-port', receiverPort!]);
    expect(await refusal(second)).toBe(
      `reference: port ${receiverPort} is in use by another program; stop it, or pass --receiver-port with a free port.`,
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('other.db'))).toEqual([]);
    expect(existsSync(db)).toBe(true);
    expect((await fetch(`${serviceUrl}/healthz`)).status).toBe(200);
    await stop(first);
  });

  it('refuses a database file that no run of the app made, and leaves it as it is', async () => {
    const db = join(dir, 'mine.db');
    writeFileSync(db, 'not the reference app’s');
    const run = runCli(['--db', db, ...FREE_PORTS]);
    expect(await refusal(run)).toBe(
      `reference: ${db} already exists and no run of the reference app claims it; move it away, or pass --db with a new file.`,
    );
    expect(readFileSync(db, 'utf8')).toBe('not the reference app’s');
    expect(readdirSync(dir)).toEqual(['mine.db']);
  });

  it('after a killed run, keeps its database under a new name and starts', async () => {
    const db = join(dir, 'reference.db');
    const killed = runCli(['--db', db, ...FREE_PORTS]);
    await started(killed);
    const pid = killed.child.pid;
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(readFileSync(`${db}.lock`, 'utf8').trim()).toBe(String(pid));

    const next = runCli(['--db', db, ...FREE_PORTS]);
    await started(next);
    const kept = join(dir, `reference.left-by-${pid}.db`);
    expect(next.stdout()).toContain(`${db} was left by a run (pid ${pid}) that was killed; kept as ${kept}`);
    expect(existsSync(kept)).toBe(true);
    expect(readFileSync(`${db}.lock`, 'utf8').trim()).toBe(String(next.child.pid));
    await stop(next);
    expect(readdirSync(dir).filter((f) => f.startsWith('reference.db'))).toEqual([]);
    expect(existsSync(kept)).toBe(true);
  });
});

import { randomBytes } from 'node:crypto';
// The noisy-neighbour scenario, against the CLI-started service over HTTP: tenant A points
// `aEndpoints` endpoints at a receiver that reads each request and never answers, plus one
// answering 500, and publishes `aEvents` clicks in one batch (with `aAccounts`, as many such tenants,
// the first with the failing endpoint; with `aOwnOrigins`, each tenant's on a receiver of its own, so
// no origin's share holds them together; with `aAnswers`, A's receiver answers 200 at once, a
// tenant whose clicks come faster than they go out); tenant B's endpoint is on a healthy
// receiver (with `bAtStalled`, on A's stalled one, which answers B's route at once: a relay both
// tenants' endpoints share). B publishes one click at a time and times publish → receipt, first without A, then
// while A's deliveries hold what the service lets them. Used by `bench/run.mjs` (part `noisy`) and
// by test/noisy-neighbour.test.ts. PostgreSQL: `workers` more `linkhooks-sender worker` processes.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleEventData } from '@linkhooks/protocol';
import Database from 'better-sqlite3';
import pg from 'pg';
import { runtimeEnv } from './runtime.mjs';

const MASTER_KEY = randomBytes(32).toString('base64');

// Self-contained (the bench harness installs process-wide signal handlers a test must not get).
class HarnessError extends Error {}
const monotonicMs = () => performance.now();
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new HarnessError(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// LINKHOOKS_BENCH_CLI: another build of the CLI, run in its place (as in service.mjs).
const CLI = process.env.LINKHOOKS_BENCH_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const TOKEN = 'svc_noisy_neighbour_token_0123456789';
const WARMUP_EVENTS = 5; // B's unmeasured publishes before it is measured without A

const click = (id) => ({ ...sampleEventData('click'), click_id: id });

/**
 * Resolves once `db` holds at least `count` live leases (requests in flight), read from the
 * database every 20 ms (the stalled receiver sees no more requests than its origin's sockets);
 * rejects after `ms`.
 */
async function leasesReach(db, count, ms) {
  const deadline = monotonicMs() + ms;
  let read;
  let close = async () => {};
  try {
    if (db.startsWith('sqlite:')) {
      const file = new Database(db.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
      close = async () => file.close();
      const st = file.prepare('SELECT count(*) AS n FROM deliveries WHERE lease_expires_at > ?');
      read = async () => st.get(Date.now()).n;
    } else {
      const url = new URL(db);
      const schema = url.searchParams.get('schema') ?? 'public';
      url.searchParams.delete('schema');
      const client = new pg.Client({ connectionString: url.toString() });
      close = () => client.end();
      await client.connect();
      const sql = `SELECT count(*)::int AS n FROM ${client.escapeIdentifier(schema)}.leases WHERE expires_at > $1`;
      read = async () => (await client.query(sql, [Date.now()])).rows[0].n;
    }
    for (;;) {
      const n = await read();
      if (n >= count) return;
      if (monotonicMs() > deadline) {
        throw new HarnessError(`timed out after ${ms} ms waiting for ${count} requests in flight (${n})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await close();
  }
}

/** An HTTPS server on a loopback port; `onRequest(req, res, body)` once the body is read. */
async function httpsServer(certs, onRequest) {
  const server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => onRequest(req, res, Buffer.concat(chunks)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

function startProcess(args, env) {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const lines = [];
  const waiters = new Set();
  child.stdout.on('data', (chunk) => {
    output += chunk;
    for (const line of String(chunk).split('\n')) {
      try {
        lines.push(JSON.parse(line));
      } catch {}
    }
    for (const w of waiters) w();
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    exited,
    logged(match) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(match);
          if (found) {
            waiters.delete(check);
            resolve(found);
          }
        };
        waiters.add(check);
        check();
        exited.then(() => reject(new HarnessError(`linkhooks-sender ${args[0]} exited:\n${output}`)));
      });
    },
  };
}

async function runCli(args, env) {
  const p = startProcess(args, env);
  let out = '';
  p.child.stdout.on('data', (c) => {
    out += c;
  });
  const code = await p.exited;
  if (code !== 0) throw new HarnessError(`linkhooks-sender ${args.join(' ')} exited ${code}`);
  return out;
}

/**
 * Runs the scenario on `db` (sqlite:<file> or a postgres:// URL) and resolves with B's
 * publish → receipt times in ms, `without` and `with` A, and what A had open when B was measured.
 */
export async function noisyNeighbour({
  db,
  certs,
  workers = 0,
  aEndpoints = 50,
  aEvents = 1000,
  bEvents = 40,
  aAccounts = 1,
  aOwnOrigins = false,
  aAnswers = false,
  bAtStalled = false,
  env: settings = {},
  untilInFlight = 0,
}) {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-noisy-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, certs.ca);
  const env = {
    PATH: process.env.PATH,
    ...runtimeEnv(), // a run on another Node.js (bench/runtime.mjs)
    LINKHOOKS_SERVICE_TOKEN: TOKEN,
    // PostgreSQL needs a master key; a SQLite service makes its own beside the database.
    LINKHOOKS_MASTER_KEY: MASTER_KEY,
    LINKHOOKS_LOG_LEVEL: 'info', // the line saying where serve listens is at info
    NODE_EXTRA_CA_CERTS: caFile,
    ...settings, // LINKHOOKS_CONCURRENCY and the like, for every process
  };
  const processes = [];
  const servers = [];
  try {
    // A's receiver: reads every request, answers none, except the failing route's 500; with
    // `aAnswers`, answers each 200 at once.
    let open = 0;
    let peakOpen = 0;
    let aArrived = 0;
    const openWaiters = new Set();
    // B's receiver answers 200 and tells who waits for that click.
    const arrivals = new Map();
    const answerB = (res, body) => {
      res.writeHead(200).end('ok');
      const id = JSON.parse(body.toString()).data?.click_id;
      arrivals.get(id)?.();
    };
    const stall = async () => {
      const server = await httpsServer(certs, (req, res, body) => {
        if (req.url === '/failing') return void res.writeHead(500).end('down');
        if (req.url === '/b') return void answerB(res, body);
        if (aAnswers) {
          aArrived++;
          res.writeHead(200).end('ok');
          for (const w of openWaiters) w();
          return;
        }
        open++;
        peakOpen = Math.max(peakOpen, open);
        res.once('close', () => open--);
        for (const w of openWaiters) w();
      });
      servers.push(server);
      return server;
    };
    const stalled = await stall();
    const healthy = bAtStalled ? stalled : await httpsServer(certs, (_req, res, body) => answerB(res, body));
    if (!bAtStalled) servers.push(healthy);

    await runCli(['migrate', '--db', db], env);
    const account = async (name) =>
      JSON.parse(
        await runCli(['accounts', 'create', '--name', name, '--plan', 'business', '--json', '--db', db], env),
      );
    const hanging = [];
    for (let k = 0; k < aAccounts; k++) hanging.push(await account(`Tenant A${k || ''}`));
    const [a, b] = [hanging[0], await account('Tenant B')];

    const serve = startProcess(['serve', '--db', db, '--port', '0', '--allow-private-networks'], env);
    processes.push(serve);
    const base = (
      await withTimeout(
        serve.logged((l) => typeof l.url === 'string'),
        15_000,
        'serve start',
      )
    ).url;
    for (let i = 0; i < workers; i++) {
      processes.push(startProcess(['worker', '--db', db, '--allow-private-networks'], env));
    }
    const post = async (path, key, body) => {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (res.status >= 300)
        throw new HarnessError(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    for (const [k, tenant] of hanging.entries()) {
      const receiver = aOwnOrigins && k > 0 ? await stall() : stalled;
      for (let i = 0; i < aEndpoints; i++) {
        await post('/v1/endpoints', tenant.api_key, {
          url: `${receiver.origin}/hang/${k}/${i}`,
          events: ['click'],
        });
      }
    }
    await post('/v1/endpoints', a.api_key, { url: `${stalled.origin}/failing`, events: ['click'] });
    await post('/v1/endpoints', b.api_key, { url: `${healthy.origin}/b`, events: ['click'] });

    let n = 0;
    // A's deliveries received when each of B's measured clicks arrived (with `aAnswers`).
    const aArrivedAtB = [];
    const measureB = async (count) => {
      const times = [];
      for (let i = 0; i < count; i++) {
        const id = `clk_b_${n++}`;
        const arrived = new Promise((resolve) => arrivals.set(id, resolve));
        const started = monotonicMs();
        await post('/internal/v1/events', TOKEN, { account_id: b.id, event: 'click', data: click(id) });
        await withTimeout(arrived, 60_000, `B's click ${id} to arrive`);
        times.push(monotonicMs() - started);
        aArrivedAtB.push(aArrived);
        arrivals.delete(id);
      }
      return times;
    };

    // Not counted: B's first deliveries open the service's connection to B's receiver and warm its
    // code, which the measurement with A finds done; counted, they would be B's p99 without A.
    await measureB(WARMUP_EVENTS);
    const without = await measureB(bEvents);
    const events = hanging.flatMap((tenant, k) =>
      Array.from({ length: aEvents }, (_, i) => ({
        account_id: tenant.id,
        event: 'click',
        data: click(`clk_a_${k}_${i}`),
      })),
    );
    for (let i = 0; i < events.length; i += 1000) {
      await post('/internal/v1/events/batch', TOKEN, { events: events.slice(i, i + 1000) });
    }
    // A's hanging deliveries take what they are let to hold before B is measured again (A's
    // answered ones have begun to arrive).
    await withTimeout(
      new Promise((resolve) => {
        const check = () => (aAnswers ? aArrived >= 16 : open >= 16) && resolve();
        openWaiters.add(check);
        check();
      }),
      30_000,
      "A's deliveries to reach the stalled receiver",
    );
    // `untilInFlight` of A's hanging requests taken (not only those the receiver sees), so that B
    // is measured against them in flight rather than behind them in the queue.
    if (untilInFlight > 0) {
      await leasesReach(db, untilInFlight, 30_000);
    }
    aArrivedAtB.length = 0;
    const withA = await measureB(bEvents);
    return {
      without,
      with: withA,
      aOpenPeak: peakOpen,
      aArrivedAtB,
      aDeliveries: aAccounts * aEvents * aEndpoints,
    };
  } finally {
    // A's requests never end: no graceful stop would finish within the bench's patience.
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await Promise.all(servers.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

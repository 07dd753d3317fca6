// Benchmark of @linkhooks/receiver against baselines measured in the same run.
//
//   pnpm build && pnpm --filter @linkhooks/receiver bench
//
// 1. constructEvent on a 1 KiB click envelope, beside the bare node:crypto floor (createHmac +
//    timingSafeEqual + JSON.parse) and the standardwebhooks package's Webhook#verify; and the same
//    in the Standard Webhooks scheme beside its own floor (the id.timestamp.body HMAC, the
//    timestamp check, JSON.parse).
// 2. An Express 5 app with webhookMiddleware against one with express.raw() and hand-written
//    verification, each in its own child process, loaded by autocannon; in both schemes.
//
// The machines this runs on are noisy, so it never asserts absolute times: it prints medians over
// interleaved rounds and ratios against the baselines. A ratio below its goal is marked BELOW but
// does not fail the run (exit 0). Only a broken harness exits non-zero: a server that does not
// start or answer 200, a baseline that does not verify, or non-2xx responses under load, because
// then the figures measure something else.
//
// It imports the BUILT package by name (package self-reference), so run `pnpm build` first.
import { fork } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { constructEvent } from '@linkhooks/receiver';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import autocannon from 'autocannon';
import { Webhook } from 'standardwebhooks';

const BODY_BYTES = 1024;

const MICRO = {
  warmupMs: 500, // per candidate, interleaved, before any round counts
  rounds: 21,
  roundMs: 200, // per candidate per round
  batch: 100, // calls between clock reads
};

const HTTP = {
  connections: 10,
  warmupSeconds: 2, // per server, not counted
  rounds: 6,
  roundSeconds: 3, // per server per round
};

const GOALS = {
  floor: 0.7, // constructEvent / bare node:crypto floor
  standardwebhooks: 2, // constructEvent / standardwebhooks
  http: 0.9, // webhookMiddleware / hand-written express.raw()
};

// ---------------------------------------------------------------------------------------------
// Helpers

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Median of per-round ratios a[r]/b[r]: samples of one round share the machine's mood, so this is
 * a cross-check on the ratio of medians that is less sensitive to a slow stretch of the run. */
const pairedRatio = (a, b) => median(a.map((x, r) => x / b[r]));
const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
const fmtRatio = (n) => n.toFixed(2);
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

class HarnessError extends Error {}
function check(condition, message) {
  if (!condition) throw new HarnessError(message);
}

/** A click envelope of BODY_BYTES bytes: the sample click with a longer (tracking) destination URL. */
function clickBody() {
  const url = 'https://shop.example.com/summer?utm_source=linkhooks&utm_medium=smartlink&utm_content=';
  const probe = Buffer.byteLength(JSON.stringify(buildEvent('click', { data: { destination_url: url } })));
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(40).slice(0, Math.max(0, BODY_BYTES - probe));
  const body = Buffer.from(JSON.stringify(buildEvent('click', { data: { destination_url: url + filler } })));
  check(
    Math.abs(body.length - BODY_BYTES) <= 8,
    `the click envelope is ${body.length} bytes, not ~${BODY_BYTES}`,
  );
  return body;
}

function throws(fn) {
  try {
    fn();
    return false;
  } catch {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures: one body, signed for linkhooks and for Standard Webhooks.

const secret = generateSecret(); // whsec_ + 43 base64url chars; the HMAC key is the whole string
const body = clickBody();
const delivery = signedDelivery({ secret, body });
const signature = delivery.headers['x-service-signature'];
const httpHeaders = delivery.headers; // content-type, x-service-signature, event/delivery id, attempt

// generateSecret() is standard base64 with padding, so the same secret serves both schemes.
const wh = new Webhook(secret);
const swId = 'msg_2mF8yUeDUa3Q8iU7sWcB1lK3eMb';
/** Standard Webhooks headers signed for now; verify() allows ±5 min, so the HTTP part re-signs per round. */
function standardHeaders() {
  const seconds = Math.floor(Date.now() / 1000);
  return {
    'webhook-id': swId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': wh.sign(swId, new Date(seconds * 1000), body),
  };
}
const swHeaders = standardHeaders();
const STANDARD = { scheme: 'standard-webhooks' };

// ---------------------------------------------------------------------------------------------
// Part 1: constructEvent beside the floor and standardwebhooks.

/** The least any verifier must do: HMAC the bytes, compare against the decoded header, parse JSON. */
function floorVerify(rawBody, header, key) {
  const given = Buffer.from(header, 'hex');
  const digest = createHmac('sha256', key).update(rawBody).digest();
  if (given.length !== digest.length || !timingSafeEqual(digest, given)) throw new Error('bad signature');
  return JSON.parse(rawBody.toString());
}

/**
 * The least a Standard Webhooks verifier must do: the timestamp within 5 min, HMAC over
 * `id.timestamp.body` with the key decoded once (ahead of time, as a hand-written receiver would),
 * compare against each `v1,` entry, parse JSON.
 */
const swKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
function floorVerifyStandard(rawBody, headers, key) {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(ts)) > 300) throw new Error('stale');
  const digest = createHmac('sha256', key).update(`${id}.${ts}.`).update(rawBody).digest();
  let ok = false;
  for (const entry of headers['webhook-signature'].split(' ')) {
    const given = Buffer.from(entry.slice(entry.indexOf(',') + 1), 'base64');
    if (entry.startsWith('v1,') && given.length === digest.length && timingSafeEqual(digest, given))
      ok = true;
  }
  if (!ok) throw new Error('bad signature');
  return JSON.parse(rawBody.toString());
}

// Each returns a number read from the result, so the work cannot be optimised away. The first three
// are the X-Service-Signature scheme's comparison, the last two the Standard Webhooks scheme's.
const candidates = [
  { name: 'constructEvent', run: () => constructEvent(body, signature, secret).data.click_id.length },
  {
    name: 'floor (node:crypto + JSON.parse)',
    run: () => floorVerify(body, signature, secret).data.click_id.length,
  },
  { name: 'standardwebhooks Webhook#verify', run: () => wh.verify(body, swHeaders).data.click_id.length },
  {
    name: 'constructEvent, standard-webhooks',
    run: () => constructEvent(body, swHeaders, secret, STANDARD).data.click_id.length,
  },
  {
    name: 'floor, Standard Webhooks form',
    run: () => floorVerifyStandard(body, swHeaders, swKey).data.click_id.length,
  },
];

function checkMicroFixtures() {
  const forged = '0'.repeat(64);
  check(constructEvent(body, signature, secret).event === 'click', 'constructEvent did not return the click');
  check(
    throws(() => constructEvent(body, forged, secret)),
    'constructEvent accepted a forged signature',
  );
  check(floorVerify(body, signature, secret).event === 'click', 'the floor did not verify the body');
  check(
    throws(() => floorVerify(body, forged, secret)),
    'the floor accepted a forged signature',
  );
  check(wh.verify(body, swHeaders).event === 'click', 'standardwebhooks did not verify the body');
  const swForged = { ...swHeaders, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
  check(
    constructEvent(body, swHeaders, secret, STANDARD).event === 'click',
    'constructEvent did not verify the Standard Webhooks form',
  );
  check(
    throws(() => constructEvent(body, swForged, secret, STANDARD)),
    'constructEvent accepted a forged webhook-signature',
  );
  check(
    throws(() => constructEvent(body, { 'x-service-signature': signature }, secret, STANDARD)),
    'constructEvent accepted a body-only delivery in the Standard Webhooks scheme',
  );
  check(
    floorVerifyStandard(body, swHeaders, swKey).event === 'click',
    'the Standard Webhooks floor did not verify',
  );
  check(
    throws(() => floorVerifyStandard(body, swForged, swKey)),
    'the Standard Webhooks floor accepted a forged signature',
  );
  check(
    throws(() =>
      wh.verify(body, { ...swHeaders, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }),
    ),
    'standardwebhooks accepted a forged signature',
  );
}

let sink = 0;
/** Calls `fn` in batches for `ms` milliseconds; returns operations per second. */
function opsPerSecond(fn, ms) {
  let ops = 0;
  let acc = 0;
  const start = performance.now();
  let now = start;
  do {
    for (let i = 0; i < MICRO.batch; i++) acc += fn();
    ops += MICRO.batch;
    now = performance.now();
  } while (now - start < ms);
  sink ^= acc;
  return ops / ((now - start) / 1000);
}

function runMicro() {
  checkMicroFixtures();
  for (const c of candidates) opsPerSecond(c.run, MICRO.warmupMs);
  const samples = candidates.map(() => []);
  for (let round = 0; round < MICRO.rounds; round++) {
    // Interleaved A,B,C; the first candidate rotates so none always runs right after another's GC debt.
    for (let k = 0; k < candidates.length; k++) {
      const i = (round + k) % candidates.length;
      samples[i].push(opsPerSecond(candidates[i].run, MICRO.roundMs));
    }
  }
  const results = candidates.map((c, i) => ({
    name: c.name,
    median: median(samples[i]),
    min: Math.min(...samples[i]),
    max: Math.max(...samples[i]),
  }));

  console.log(
    `\n1. Verify + parse a ${body.length}-byte click envelope (median of ${MICRO.rounds} interleaved rounds of ${MICRO.roundMs} ms)`,
  );
  console.log(`   ${pad('', 34)}${lpad('ops/s', 10)}${lpad('µs/op', 9)}   ${'range (ops/s)'}`);
  for (const r of results) {
    console.log(
      `   ${pad(r.name, 34)}${lpad(fmtInt(r.median), 10)}${lpad((1e6 / r.median).toFixed(2), 9)}   ${fmtInt(r.min)} – ${fmtInt(r.max)}`,
    );
  }
  const [ce, floor, sw, ceStandard, floorStandard] = results;
  return {
    vsFloor: ce.median / floor.median,
    vsSw: ce.median / sw.median,
    pairedFloor: pairedRatio(samples[0], samples[1]),
    pairedSw: pairedRatio(samples[0], samples[2]),
    standardVsFloor: ceStandard.median / floorStandard.median,
    standardVsSw: ceStandard.median / sw.median,
    pairedStandardFloor: pairedRatio(samples[3], samples[4]),
    pairedStandardSw: pairedRatio(samples[3], samples[2]),
  };
}

// ---------------------------------------------------------------------------------------------
// Part 2: Express + webhookMiddleware against Express + express.raw() + hand-written verification.

const serverScript = fileURLToPath(new URL('./server.mjs', import.meta.url));
const children = new Set();
const exited = (child) => child.exitCode !== null || child.signalCode !== null;

function startServer(kind, label) {
  const child = fork(serverScript, [kind], {
    env: { ...process.env, BENCH_SECRET: secret },
    execArgv: [], // not the parent's flags (e.g. --cpu-prof)
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new HarnessError(`the ${kind} server did not start within 10 s`)),
      10_000,
    );
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({
        kind,
        label,
        child,
        standard: kind.endsWith('-sw'),
        url: `http://127.0.0.1:${m.port}/webhooks`,
      });
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new HarnessError(`the ${kind} server exited before listening (${code ?? sig})`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function stopChild(child) {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const stopAll = () => Promise.all([...children].map(stopChild));

// Last resort: whatever ends this process, no server is left behind.
process.on('exit', () => {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopAll().finally(() => process.exit(130));
  });
}

/** The headers a server is loaded with: the Standard Webhooks servers get the three headers, fresh. */
const headersFor = (server) => (server.standard ? { ...httpHeaders, ...standardHeaders() } : httpHeaders);

/**
 * The server must accept the signed delivery with 200 {"received":true} and refuse a forged one;
 * a Standard Webhooks server must also refuse the delivery without its three headers.
 */
async function checkServer(server) {
  const headers = headersFor(server);
  const ok = await fetch(server.url, { method: 'POST', headers, body });
  const text = await ok.text();
  check(
    ok.status === 200 && JSON.parse(text).received === true,
    `${server.label} answered ${ok.status} ${text} to a valid delivery`,
  );
  const forged = server.standard
    ? { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }
    : { ...headers, 'x-service-signature': '0'.repeat(64) };
  const bad = await fetch(server.url, { method: 'POST', headers: forged, body });
  await bad.text();
  check(bad.status === 401, `${server.label} answered ${bad.status}, not 401, to a forged signature`);
  if (server.standard) {
    const bodyOnly = await fetch(server.url, { method: 'POST', headers: httpHeaders, body });
    await bodyOnly.text();
    check(
      bodyOnly.status === 401,
      `${server.label} answered ${bodyOnly.status}, not 401, to a body-only delivery`,
    );
  }
}

async function load(server, seconds) {
  const r = await autocannon({
    url: server.url,
    method: 'POST',
    headers: headersFor(server),
    body,
    connections: HTTP.connections,
    duration: seconds,
  });
  check(!exited(server.child), `the ${server.label} server exited during the run`);
  return { rps: r['2xx'] / r.duration, bad: r.non2xx + r.errors + r.timeouts, p50: r.latency.p50 };
}

async function runHttp(pair, title) {
  const servers = await Promise.all(pair.map(([kind, label]) => startServer(kind, label)));
  for (const s of servers) await checkServer(s);
  for (const s of servers) await load(s, HTTP.warmupSeconds);

  const samples = servers.map(() => []);
  let bad = 0;
  for (let round = 0; round < HTTP.rounds; round++) {
    for (let k = 0; k < servers.length; k++) {
      const i = (round + k) % servers.length;
      const r = await load(servers[i], HTTP.roundSeconds);
      samples[i].push(r);
      bad += r.bad;
    }
  }
  const results = servers.map((s, i) => {
    const rps = samples[i].map((r) => r.rps);
    return {
      name: s.label,
      median: median(rps),
      min: Math.min(...rps),
      max: Math.max(...rps),
      p50: median(samples[i].map((r) => r.p50)),
    };
  });

  console.log(
    `\n${title}: Express ${expressVersion()} on 127.0.0.1, autocannon ${HTTP.connections} connections, ${body.length}-byte signed POST (median of ${HTTP.rounds} interleaved rounds of ${HTTP.roundSeconds} s)`,
  );
  console.log(`   ${pad('', 34)}${lpad('req/s', 10)}${lpad('p50 ms', 9)}   range (req/s)`);
  for (const r of results) {
    console.log(
      `   ${pad(r.name, 34)}${lpad(fmtInt(r.median), 10)}${lpad(r.p50, 9)}   ${fmtInt(r.min)} – ${fmtInt(r.max)}`,
    );
  }
  console.log(`   non-2xx responses, errors and timeouts: ${bad}`);
  await Promise.all(servers.map((s) => stopChild(s.child)));
  const [sdk, hand] = results;
  const rps = samples.map((rounds) => rounds.map((r) => r.rps));
  return { ratio: sdk.median / hand.median, paired: pairedRatio(rps[0], rps[1]), bad };
}

const expressVersion = () => createRequire(import.meta.url)('express/package.json').version;

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  console.log(
    `@linkhooks/receiver bench — Node ${process.version}, ${availableParallelism()} CPUs. Ratios matter; absolute figures depend on the machine.`,
  );
  const micro = runMicro();
  console.log(
    `   ratios of medians: constructEvent / floor ${fmtRatio(micro.vsFloor)}, constructEvent / standardwebhooks ${fmtRatio(micro.vsSw)}×`,
  );
  console.log(
    `   paired (median of per-round ratios): ${fmtRatio(micro.pairedFloor)}, ${fmtRatio(micro.pairedSw)}×`,
  );
  console.log(
    `   Standard Webhooks scheme: constructEvent / its floor ${fmtRatio(micro.standardVsFloor)}, / standardwebhooks ${fmtRatio(micro.standardVsSw)}×; paired ${fmtRatio(micro.pairedStandardFloor)}, ${fmtRatio(micro.pairedStandardSw)}×`,
  );
  let http;
  let httpStandard;
  try {
    http = await runHttp(
      [
        ['sdk', 'webhookMiddleware'],
        ['hand', 'express.raw + hand-written'],
      ],
      '2. X-Service-Signature',
    );
    console.log(
      `   ratio of medians: webhookMiddleware / hand-written ${fmtRatio(http.ratio)}; paired: ${fmtRatio(http.paired)}`,
    );
    httpStandard = await runHttp(
      [
        ['sdk-sw', 'webhookMiddleware, standard-webhooks'],
        ['hand-sw', 'express.raw + hand-written, SW'],
      ],
      '3. Standard Webhooks',
    );
    console.log(
      `   ratio of medians: webhookMiddleware / hand-written ${fmtRatio(httpStandard.ratio)}; paired: ${fmtRatio(httpStandard.paired)}`,
    );
  } finally {
    await stopAll();
  }
  const bad = http.bad + httpStandard.bad;

  const rows = [
    [
      'constructEvent / node:crypto floor',
      fmtRatio(micro.vsFloor),
      `≥ ${fmtRatio(GOALS.floor)}`,
      micro.vsFloor >= GOALS.floor,
    ],
    [
      'constructEvent / standardwebhooks',
      `${fmtRatio(micro.vsSw)}×`,
      `≥ ${fmtRatio(GOALS.standardwebhooks)}×`,
      micro.vsSw >= GOALS.standardwebhooks,
    ],
    [
      'webhookMiddleware / hand-written',
      fmtRatio(http.ratio),
      `≥ ${fmtRatio(GOALS.http)}`,
      http.ratio >= GOALS.http,
    ],
    [
      'SW: constructEvent / its floor',
      fmtRatio(micro.standardVsFloor),
      `≥ ${fmtRatio(GOALS.floor)}`,
      micro.standardVsFloor >= GOALS.floor,
    ],
    [
      'SW: constructEvent / standardwebhooks',
      `${fmtRatio(micro.standardVsSw)}×`,
      `≥ ${fmtRatio(GOALS.standardwebhooks)}×`,
      micro.standardVsSw >= GOALS.standardwebhooks,
    ],
    [
      'SW: webhookMiddleware / hand-written',
      fmtRatio(httpStandard.ratio),
      `≥ ${fmtRatio(GOALS.http)}`,
      httpStandard.ratio >= GOALS.http,
    ],
  ];
  console.log('\nSummary');
  console.log(`   ${pad('ratio', 36)}${lpad('value', 8)}${lpad('goal', 9)}   result`);
  for (const [name, value, goal, pass] of rows) {
    console.log(`   ${pad(name, 36)}${lpad(value, 8)}${lpad(goal, 9)}   ${pass ? 'PASS' : 'BELOW'}`);
  }
  console.log(
    `   ${pad('HTTP non-2xx / errors / timeouts', 36)}${lpad(bad, 8)}${lpad('= 0', 9)}   ${bad === 0 ? 'OK' : 'INVALID'}`,
  );
  console.log(
    `   (${((performance.now() - started) / 1000).toFixed(0)} s; ratios below goal are reported, not failed)`,
  );
  if (sink === 0.5) console.log(sink); // keeps the micro-benchmark results observable
  if (bad > 0) {
    console.error('\nThe HTTP figures are invalid: some requests did not get a 2xx.');
    process.exitCode = 1;
  }
}

main()
  .catch(async (error) => {
    await stopAll();
    console.error(`\nbench: ${error instanceof HarnessError ? error.message : (error?.stack ?? error)}`);
    process.exitCode = 1;
  })
  .finally(() => {
    // fetch keep-alive sockets and the like must not hold the process open.
    setImmediate(() => process.exit());
  });

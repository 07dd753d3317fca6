// The loopback HTTPS receiver of the sender benchmark, forked by bench/run.mjs so that it does not
// share the engine's event loop (on two cores, each process gets its own).
//
// It is deliberately minimal — node:https, read the whole body, answer 200 {"received":true} — so
// the receiver is never what is measured; the tests' receiver (test/helpers/https-receiver.ts)
// verifies each delivery through Express, a cost this must leave out. It listens on several
// 127.0.0.1 ports, one origin per endpoint, like endpoints of different customers. A body whose
// click_id starts with `lat_<seq>` is a latency probe: its receipt time (process.hrtime,
// CLOCK_MONOTONIC, which every process on the machine shares) is kept and handed to the parent on
// request.
//
// Protocol (IPC): parent → {type:'listen', key, cert, ports} → {type:'ready', ports:[…]};
// {type:'stats'} → {type:'stats', requests, rejected, receipts:[[seq, ms], …], cpuUs} (receipts drained;
// cpuUs: this process's CPU so far, µs); {type:'reached', requests: n} → {type:'reached', requests,
// rejected} once it has had n requests, or at the first it rejects: told, not polled.
// The process exits as soon as the IPC channel closes, so it cannot outlive the benchmark.
import { createServer } from 'node:https';

if (!process.send) {
  console.error('bench/receiver.mjs: run it through bench/run.mjs (needs an IPC channel)');
  process.exit(2);
}

const MARKER = Buffer.from('"click_id":"lat_');
const OK = Buffer.from('{"received":true}');
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

let requests = 0;
let rejected = 0;
let receipts = [];
/** The request counts the parent waits for ('reached'), lowest first. */
let awaited = [];

function tell() {
  while (awaited.length > 0 && (requests >= awaited[0] || rejected > 0)) {
    awaited.shift();
    process.send({ type: 'reached', requests, rejected });
  }
}

function handle(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = monotonicMs();
    requests++;
    const signature = req.headers['x-service-signature'];
    // A cheap guard, not a verification: a sender that forgot to sign gets a 400 and the bench
    // reports it as a broken harness instead of measuring something else.
    if (req.method !== 'POST' || typeof signature !== 'string' || signature.length !== 64) {
      rejected++;
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"unsigned"}');
      tell();
      return;
    }
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const i = body.indexOf(MARKER);
    if (i >= 0) {
      const from = i + MARKER.length;
      const seq = Number(body.toString('latin1', from, body.indexOf(0x22, from)));
      receipts.push([seq, at]);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': OK.length }).end(OK);
    tell();
  });
}

function listen({ key, cert, ports }) {
  const servers = Array.from({ length: ports }, () => {
    const server = createServer({ key, cert }, handle);
    server.keepAliveTimeout = 60_000;
    return server;
  });
  Promise.all(
    servers.map(
      (server) =>
        new Promise((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server.address().port));
        }),
    ),
  ).then(
    (bound) => process.send({ type: 'ready', ports: bound }),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

process.on('message', (message) => {
  if (message.type === 'listen') listen(message);
  else if (message.type === 'stats') {
    const cpu = process.cpuUsage();
    process.send({ type: 'stats', requests, rejected, receipts, cpuUs: cpu.user + cpu.system });
    receipts = [];
  } else if (message.type === 'reached') {
    awaited = [...awaited, message.requests].sort((a, b) => a - b);
    tell();
  }
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));

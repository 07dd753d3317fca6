// A webhook receiver for the HTTP benchmark, run by bench/run.mjs as a child process so the load
// generator and the server each get their own event loop (and, on two cores, their own core).
//
//   node bench/server.mjs sdk    Express 5 + webhookMiddleware from @linkhooks/receiver/express
//   node bench/server.mjs hand   Express 5 + express.raw() + createHmac/timingSafeEqual/JSON.parse
//   node bench/server.mjs sdk-sw   webhookMiddleware with scheme: 'standard-webhooks'
//   node bench/server.mjs hand-sw  express.raw() + the Standard Webhooks form checked by hand
//
// The secret comes from BENCH_SECRET. The listening port is reported over the IPC channel, and the
// process exits as soon as that channel closes, so it cannot outlive the benchmark that forked it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import express from 'express';

const kind = process.argv[2];
const secret = process.env.BENCH_SECRET;
if (!secret || !process.send) {
  console.error('bench/server.mjs: run it through bench/run.mjs (needs BENCH_SECRET and an IPC channel)');
  process.exit(2);
}

// Both servers do the same small "work" with the event, so the comparison is the verification path.
const onClick = (event) => {
  if (typeof event.data.click_id !== 'string') throw new Error('a click without click_id');
};

const app = express();
app.disable('x-powered-by');

if (kind === 'sdk') {
  app.post('/webhooks', webhookMiddleware({ secret, on: { click: onClick } }));
} else if (kind === 'hand') {
  app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
    const header = req.get('x-service-signature');
    const given = typeof header === 'string' && header.length === 64 ? Buffer.from(header, 'hex') : null;
    const digest = createHmac('sha256', secret).update(req.body).digest();
    if (!given || given.length !== digest.length || !timingSafeEqual(digest, given)) {
      res.status(401).json({ error: { code: 'invalid_signature' } });
      return;
    }
    let event;
    try {
      event = JSON.parse(req.body.toString('utf8'));
    } catch {
      res.status(400).json({ error: { code: 'invalid_json' } });
      return;
    }
    if (event.event === 'click') onClick(event);
    res.status(200).json({ received: true });
  });
} else if (kind === 'sdk-sw') {
  app.post('/webhooks', webhookMiddleware({ secret, scheme: 'standard-webhooks', on: { click: onClick } }));
} else if (kind === 'hand-sw') {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  app.post('/webhooks', express.raw({ type: 'application/json' }), (req, res) => {
    const id = req.get('webhook-id');
    const ts = req.get('webhook-timestamp');
    const header = req.get('webhook-signature');
    const fresh = ts !== undefined && Math.abs(Math.floor(Date.now() / 1000) - Number(ts)) <= 300;
    let ok = false;
    if (id && fresh && header) {
      const digest = createHmac('sha256', key).update(`${id}.${ts}.`).update(req.body).digest();
      for (const entry of header.split(' ')) {
        const given = Buffer.from(entry.slice(entry.indexOf(',') + 1), 'base64');
        if (entry.startsWith('v1,') && given.length === digest.length && timingSafeEqual(digest, given))
          ok = true;
      }
    }
    if (!ok) {
      res.status(401).json({ error: { code: 'invalid_signature' } });
      return;
    }
    let event;
    try {
      event = JSON.parse(req.body.toString('utf8'));
    } catch {
      res.status(400).json({ error: { code: 'invalid_json' } });
      return;
    }
    if (event.event === 'click') onClick(event);
    res.status(200).json({ received: true });
  });
} else {
  console.error(`bench/server.mjs: unknown server kind "${kind}" (sdk | hand | sdk-sw | hand-sw)`);
  process.exit(2);
}

const server = app.listen(0, '127.0.0.1', (error) => {
  if (error) {
    console.error(error);
    process.exit(1);
  }
  process.send({ kind, port: server.address().port, pid: process.pid });
});

process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));

// The floor of the ingest figures: a node:http server, in its own process like the service, that
// reads each request's JSON body, parses it and answers 202 with a publish's answer, and does
// nothing else. Driven by the same clients as the service, it shows what this machine's HTTP
// and JSON cost alone; the service's ingest is quoted against it as well as in events/s.
//
// Protocol (IPC): parent → {type:'listen'} → {type:'ready', port}. Exits when the channel closes.
import { createServer } from 'node:http';

if (!process.send) {
  console.error('bench/ingest-floor.mjs: run it through bench/run.mjs (needs an IPC channel)');
  process.exit(2);
}

const PUBLISHED = { event_id: 'evt_01JD3W5T3Y8Q0Z6M7B1N2C4V5X', deliveries: [] };
const ONE = JSON.stringify(PUBLISHED);
const ITEM = { status: 202, ...PUBLISHED };

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const answer = Array.isArray(body.events)
      ? JSON.stringify({ results: body.events.map(() => ITEM) })
      : ONE;
    res.writeHead(202, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(answer),
    });
    res.end(answer);
  });
});

process.on('message', (message) => {
  if (message.type !== 'listen') return;
  server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
});
process.on('disconnect', () => process.exit(0));

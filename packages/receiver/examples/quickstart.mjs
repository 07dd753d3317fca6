// The receiver quick start: a real Express server verifies and handles signed deliveries.
// Run from the repository root with `node packages/receiver/examples/quickstart.mjs`, after `pnpm build`.
import { createServer } from 'node:http';
import { webhookMiddleware } from '@linkhooks/receiver/express';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import express from 'express';

// In production the secret comes from the endpoint you created; here we make one up.
const secret = process.env.LINKHOOKS_SECRET ?? generateSecret();

const app = express();
app.post(
  '/webhooks/linkhooks',
  webhookMiddleware({
    secret,
    on: {
      click: (event) => console.log(`  handled click ${event.data.click_id} from ${event.data.country}`),
      conversion: (event) =>
        console.log(
          `  handled conversion ${event.data.conversion_id}: ${event.data.revenue} ${event.data.currency}`,
        ),
      'link.created': (event) => console.log(`  handled link.created /${event.data.slug}`),
      'link.updated': (event) =>
        console.log(`  handled link.updated /${event.data.slug} (${event.data.changed})`),
      'link.deleted': (event) => console.log(`  handled link.deleted /${event.data.slug}`),
      'alert.triggered': (event) =>
        console.log(
          `  handled alert.triggered "${event.data.alert_name}": ${event.data.metric} = ${event.data.current_value}`,
        ),
    },
  }),
);

const server = createServer(app).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${server.address().port}/webhooks/linkhooks`;
console.log(`Receiver listening at ${url}\n`);

const send = async (label, { body, headers }) => {
  const response = await fetch(url, { method: 'POST', headers, body });
  console.log(`${label} → ${response.status} ${await response.text()}\n`);
  return response.status;
};

const statuses = [];
for (const name of [
  'click',
  'conversion',
  'link.created',
  'link.updated',
  'link.deleted',
  'alert.triggered',
]) {
  statuses.push(await send(`Signed ${name} delivery`, signedDelivery({ secret, event: buildEvent(name) })));
}
// A forged delivery: signed with another secret. The handler never runs; the answer is 401.
const forged = await send(
  'Forged click delivery',
  signedDelivery({ secret: generateSecret(), event: buildEvent('click') }),
);

server.close();
const ok = statuses.every((s) => s === 200) && forged === 401;
console.log(
  ok ? 'Every signed delivery was verified and handled; the forged one was refused.' : 'Unexpected answers.',
);
process.exit(ok ? 0 : 1);

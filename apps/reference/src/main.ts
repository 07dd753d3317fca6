/**
 * `pnpm --filter @linkhooks/reference start`: the reference app from the command line.
 *   --port 8080  --receiver-port 8443  --time-scale 0.01  --rate 2  --receiver-mode ok|fail|hang|wrong-secret
 * Keys while it runs: o ok · f fail (500) · h hang · w wrong secret · q quit.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startReferenceApp } from './reference-app.js';
import { RECEIVER_MODES, type ReceiverMode } from './sample-receiver.js';

function options() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8080' },
      'receiver-port': { type: 'string', default: '8443' },
      'time-scale': { type: 'string', default: '0.01' },
      rate: { type: 'string', default: '2' },
      'receiver-mode': { type: 'string', default: 'ok' },
      db: { type: 'string', default: join('data', 'reference.db') },
    },
    strict: true,
  });
  const number = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number of at least ${min}`);
    return n;
  };
  const mode = values['receiver-mode'] as ReceiverMode;
  if (!RECEIVER_MODES.includes(mode))
    throw new Error(`--receiver-mode must be one of: ${RECEIVER_MODES.join(', ')}`);
  return {
    port: number('port', values.port, 0),
    receiverPort: number('receiver-port', values['receiver-port'], 0),
    timeScale: number('time-scale', values['time-scale'], 0.00001),
    rate: number('rate', values.rate, 0),
    receiverMode: mode,
    dbFile: values.db,
  };
}

async function main() {
  let settings: ReturnType<typeof options>;
  try {
    settings = options();
  } catch (error) {
    console.error(`reference: ${(error as Error).message}`);
    process.exit(2);
  }
  const serviceToken = `svc_${randomBytes(18).toString('base64url')}`;
  const app = await startReferenceApp({ ...settings, serviceToken, log: (line) => console.log(line) });
  const schedule = Math.round((10.6 * 3600 * settings.timeScale) / 6) / 10;
  console.log(`
linkhooks reference app
  dashboard        ${app.dashboardUrl}   (sign in with the API key below)
  management API   ${app.serviceUrl}/v1   (OpenAPI: ${app.serviceUrl}/v1/openapi.json)
  API key          ${app.apiKey}
  service token    ${serviceToken}   (POST ${app.serviceUrl}/internal/v1/events)
  sample receiver  ${app.receiver.url}   (mode: ${app.receiver.mode})
  endpoint         ${app.endpoint.id}, every event, secret ${app.endpoint.secret}
  traffic          ${settings.rate} events/s; retry schedule ×${settings.timeScale} (all six attempts in ~${schedule} min)

  keys: o ok · f fail (500) · h hang · w wrong secret · q quit
  try:  curl -s ${app.serviceUrl}/v1/endpoints/${app.endpoint.id}/deliveries -H "Authorization: Bearer ${app.apiKey}"
`);
  const stop = async () => {
    console.log('stopping…');
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (process.stdin.isTTY) {
    process.stdin.setRawMode(true);
    process.stdin.on('data', (key) => {
      const k = key.toString();
      const mode = ({ o: 'ok', f: 'fail', h: 'hang', w: 'wrong-secret' } as Record<string, ReceiverMode>)[k];
      if (mode) {
        app.receiver.setMode(mode);
        console.log(`receiver: switched to ${mode}`);
      } else if (k === 'q' || k === '\u0003') void stop();
    });
  }
}

void main();

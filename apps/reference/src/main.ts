/**
 * `pnpm --filter @linkhooks/reference start`: the reference app from the command line.
 *   --port 8080  --receiver-port 8443  --time-scale 0.01  --rate 2  --receiver-mode ok|fail|hang|wrong-secret
 *   --db data/reference.db
 * Keys while it runs: c show the banner again · o ok · f fail (500) · h hang · w wrong secret · q quit.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatBanner } from './banner.js';
import { startReferenceApp } from './reference-app.js';
import { RECEIVER_MODES, type ReceiverMode } from './sample-receiver.js';
import { isStartError, type StartError } from './start-error.js';

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
  const port = (name: string, value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 65_535)
      throw new Error(`--${name} must be a whole number from 0 to 65535`);
    return n;
  };
  const mode = values['receiver-mode'] as ReceiverMode;
  if (!RECEIVER_MODES.includes(mode))
    throw new Error(`--receiver-mode must be one of: ${RECEIVER_MODES.join(', ')}`);
  return {
    port: port('port', values.port),
    receiverPort: port('receiver-port', values['receiver-port']),
    timeScale: number('time-scale', values['time-scale'], 0.00001),
    rate: number('rate', values.rate, 0),
    receiverMode: mode,
    dbFile: values.db,
  };
}

/** What the user can do about a start that could not go ahead, in the flags of this command. */
function advice(error: StartError): string {
  const flag = error.detail.server === 'receiver' ? '--receiver-port' : '--port';
  switch (error.code) {
    case 'database_in_use':
      return 'stop it first, or pass --db with another file (and --port and --receiver-port with free ports) to run a second one';
    case 'database_not_ours':
      return 'move it away, or pass --db with a new file';
    case 'port_in_use':
      return `stop it, or pass ${flag} with a free port`;
    case 'port_refused':
      return `pass ${flag} with a port above 1023`;
  }
}

const KEY_MODES: Record<string, ReceiverMode> = { o: 'ok', f: 'fail', h: 'hang', w: 'wrong-secret' };

async function main() {
  let settings: ReturnType<typeof options>;
  try {
    settings = options();
  } catch (error) {
    console.error(`reference: ${(error as Error).message}`);
    process.exit(2);
  }
  const serviceToken = `svc_${randomBytes(18).toString('base64url')}`;
  // Signals are handled from the first moment: one that arrives while the app is still starting
  // waits for the start, then closes what it made (its lock and database included).
  const starting = startReferenceApp({ ...settings, serviceToken, log: (line) => console.log(line) });
  let stopping = false;
  const stop = async () => {
    // A second signal while stopping says stop now, should the close hang.
    if (stopping) process.exit(1);
    stopping = true;
    console.log('stopping…');
    const started = await starting.catch(() => null);
    await started?.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
  let app: Awaited<typeof starting>;
  try {
    app = await starting;
  } catch (error) {
    if (!isStartError(error)) throw error;
    console.error(`reference: ${error.message}; ${advice(error)}.`);
    process.exit(1);
  }
  const banner = { rate: settings.rate, timeScale: settings.timeScale, serviceToken };
  console.log(formatBanner(app, banner));
  const showBanner = async () => {
    const endpoint = await app.sender.getEndpoint(app.accountId, app.endpoint.id).catch(() => app.endpoint);
    console.log(formatBanner(app, banner, endpoint));
  };

  if (process.stdin.isTTY) {
    process.stdin.setRawMode(true);
    process.stdin.on('data', (key) => {
      const k = key.toString();
      const mode = KEY_MODES[k];
      if (mode) app.setReceiverMode(mode);
      else if (k === 'c') void showBanner();
      else if (k === 'q' || k === '\u0003') void stop();
    });
  }
}

void main();

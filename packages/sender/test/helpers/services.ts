/**
 * Probes the machine's PostgreSQL before a suite that needs it. Off CI a missing service skips that
 * suite with a loud notice; under CI=true it is a failure, never a silent skip (design C7).
 */
import { connect } from 'node:net';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 5432) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves whether the service is up; throws under CI when it is not. */
export async function requireService(name: string, url: string): Promise<boolean> {
  if (await reachable(url)) return true;
  const message = `${name} is not reachable at ${url}.`;
  if (process.env.CI === 'true') throw new Error(`${message} CI needs it: start it.`);
  console.warn(`\n!!! SKIPPING the ${name} suite: ${message} Start it to run these tests.\n`);
  return false;
}

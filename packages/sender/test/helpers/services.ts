/**
 * Probes the machine's PostgreSQL before a suite that needs it. Off CI a missing service skips that
 * suite with a loud notice; under CI=true it is a failure, never a silent skip (design C7).
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type Runtime, runtimeBin } from '@linkhooks/runtimes';
import pg from 'pg';
import { afterAll } from 'vitest';

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

/**
 * The `node` of another Node.js version (the registry's build, from @linkhooks/runtimes), or null
 * where this machine lacks it: off CI a loud skip, under CI=true a failure.
 */
export function requireNode(runtime: Extract<Runtime, 'node22' | 'node24'>): string | null {
  const bin = runtimeBin(runtime);
  if (bin) return join(bin, 'node');
  const message = `${runtime} is not installed (@linkhooks/runtimes installs it on Linux x64 only).`;
  if (process.env.CI === 'true') throw new Error(`${message} CI needs it.`);
  console.warn(`\n!!! SKIPPING the ${runtime} suite: ${message}\n`);
  return null;
}

/**
 * A fresh schema name for a suite (`<prefix>_<hex>`), dropped with what it holds after the suite
 * when PostgreSQL was `up`.
 */
export function suiteSchema(prefix: string, up: boolean): string {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    if (!up) return;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  return schema;
}

/**
 * A worker's port: `/healthz`, its own `/metrics` behind the metrics token when one is set, with
 * serve's failed sign-in limit (design D26), and JSON errors for anything else.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSender } from '../engine/sender.js';
import { createMemoryStore } from '../store/memory-store.js';
import { createWorkerListener } from './worker-listener.js';

const TOKEN = 'metrics_token_0123456789abcdef';
// A real engine's metrics, as a worker serves them.
const sender = createSender({ store: createMemoryStore() });
afterAll(() => sender.stop(0));

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

async function start(options: Partial<Parameters<typeof createWorkerListener>[0]> = {}) {
  server = createServer(createWorkerListener({ sender, ...options }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return (path: string, token?: string, method = 'GET') =>
    fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

describe("a worker's port", () => {
  it('answers /healthz and its metrics, open without a token', async () => {
    const get = await start();
    expect(await (await get('/healthz')).json()).toEqual({ ok: true });
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/^linkhooks_attempts_in_flight 0$/m);
    expect(text).toMatch(/^linkhooks_process_cpu_seconds_total \d/m);
    const other = await get('/v1/endpoints');
    expect(other.status).toBe(404);
    expect((await other.json()).error.code).toBe('route_not_found');
  });

  it('limits wrong metrics tokens by address, as serve does: then even the right one waits', async () => {
    const get = await start({ metricsToken: TOKEN, signInFailuresPerMinute: 2 });
    expect((await get('/metrics')).status).toBe(401);
    expect((await get('/metrics', TOKEN)).status).toBe(200);
    expect((await get('/metrics', 'wrong')).status).toBe(401);
    const limited = await get('/metrics', TOKEN);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await limited.json()).error.code).toBe('rate_limited');
    // The health check takes no credential: it still answers.
    expect((await get('/healthz')).status).toBe(200);
  });
});

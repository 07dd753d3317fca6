/** `GET /metrics` behind LINKHOOKS_METRICS_TOKEN: the router's `metricsToken` option, over HTTP. */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/api/service-app.js';
import { createSender } from '../../src/engine/sender.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

const TOKEN = 'metrics_token_0123456789';

describe('GET /metrics with a metrics token', () => {
  const store = createMemoryStore();
  const sender = createSender({ store });
  let base = '';
  let close: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const server = createServiceApp({ sender, metricsToken: TOKEN }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close();
    await sender.stop(0);
    await store.close();
  });

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`]) {
      const res = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('linkhooks_queue_depth');
    expect(text).toContain('linkhooks_nodejs_eventloop_lag_p99_seconds');
    expect(text).toMatch(/^linkhooks_process_cpu_seconds_total \d/m);
    expect(text).not.toContain('linkhooks_process_process_');
  });
});

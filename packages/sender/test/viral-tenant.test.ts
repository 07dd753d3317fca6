/**
 * A tenant whose clicks come faster than they go out takes no other tenant's turn (design D77),
 * through the CLI-started service over HTTP with real HTTPS receivers, on SQLite and on PostgreSQL
 * with three worker processes. `pnpm bench` (part `noisy`, a viral tenant) prints the times.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { noisyNeighbour } from '../bench/noisy-neighbour.mjs';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';
import { createTestCertificates } from './helpers/test-ca.mjs';

const pgUp = await requireService('PostgreSQL', PG_URL);
const certs = createTestCertificates();
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-viral-test-'));
const schemas = pgSchemas('lh_viral');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pgUp) await schemas.drop();
});

describe('a viral tenant', () => {
  // A tenant whose clicks come faster than they go out (a viral link): 20,000 deliveries, every one
  // due before B's, to endpoints that answer at once, so no endpoint, account or origin is at its
  // limit and only the claim's order decides. Taken in due order, each of B's clicks waited for
  // A's whole backlog. The accounts in turn (design D77) take B's within a turn: each of its clicks
  // arrives before half of A's are out.
  const viral = { aAnswers: true, aEndpoints: 50, aEvents: 400, bEvents: 5 };

  it('delivers tenant B’s clicks ahead of another tenant’s backlog on SQLite', async () => {
    const result = await noisyNeighbour({ db: `sqlite:${join(dir, 'viral.db')}`, certs, ...viral });
    expect(result.aArrivedAtB).toHaveLength(viral.bEvents);
    expect(Math.max(...result.aArrivedAtB)).toBeLessThan(result.aDeliveries / 2);
  }, 120_000);

  it.runIf(pgUp)(
    'delivers tenant B’s clicks ahead of another tenant’s backlog on PostgreSQL with three workers',
    async () => {
      const db = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schemas.fresh()}`;
      const result = await noisyNeighbour({ db, certs, workers: 2, ...viral });
      expect(result.aArrivedAtB).toHaveLength(viral.bEvents);
      expect(Math.max(...result.aArrivedAtB)).toBeLessThan(result.aDeliveries / 2);
    },
    120_000,
  );
});

/**
 * Deleting an account while publishes for it run on other connections (design D37), on
 * PostgreSQL: a publish either commits before the deletion's mark, and its rows are removed with
 * the rest, or is refused with `not_found`; nothing of the account is left afterwards.
 */
import { sampleEventData } from '@linkhooks/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { isSenderError } from '../src/errors.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('postgres account deletion racing publishes', () => {
  const schemas = pgSchemas('lh_delrace');
  afterAll(schemas.drop);

  it('leaves no row of the account: each publish was removed with it or refused', async () => {
    const schema = schemas.fresh();
    const stores = [0, 1, 2].map(() =>
      createPostgresStore({ connectionString: PG_URL, schema, poolSize: 4 }),
    );
    await stores[0]!.migrate();
    // Three engines, as three service processes on one database: publishes on two, the deletion on one.
    const [deleter, ...publishers] = stores.map((store) => createSender({ store }));
    try {
      const { account } = await deleter!.createAccount({ name: 'Doomed', plan: 'business' });
      const { account: kept } = await deleter!.createAccount({ name: 'Kept', plan: 'business' });
      for (const a of [account.id, kept.id]) {
        await stores[0]!.createEndpoint({
          id: `ep_${a}`,
          accountId: a,
          url: 'https://receiver.example.com/hook',
          events: ['click'],
          secret: 'whsec_test',
          description: null,
          now: Date.now(),
        });
      }
      const input = { event: 'click' as const, data: sampleEventData('click') };
      await publishers[0]!.publish(kept.id, input);
      const stored: string[] = [];
      const refusals: unknown[] = [];
      let deletion: Promise<{ removed: number }> | undefined;
      // Each loop publishes until it is refused; the deletion starts once some have been stored,
      // so publishes run before, during and after its mark.
      const loop = async (sender: (typeof publishers)[number] | undefined) => {
        for (let i = 0; i < 2_000; i++) {
          try {
            const { eventId } = await sender!.publish(account.id, input);
            stored.push(eventId);
            if (stored.length === 50) deletion = deleter!.deleteAccount(account.id);
          } catch (error) {
            refusals.push(error);
            return;
          }
        }
        throw new Error('a publish loop was never refused');
      };
      await Promise.all([...Array(8)].map((_, i) => loop(publishers[i % 2])));
      expect(deletion).toBeDefined();
      const { removed } = await deletion!;
      expect(refusals).toHaveLength(8);
      for (const error of refusals) {
        expect(isSenderError(error) && error.code).toBe('not_found');
      }
      // Every event stored before the mark went with the account, with its delivery.
      expect(removed).toBeGreaterThanOrEqual(2 * stored.length);
      const left = await schemas.admin.query(
        `SELECT (SELECT count(*) FROM "${schema}".events WHERE account_id = $1)::int AS events,
                (SELECT count(*) FROM "${schema}".deliveries WHERE account_id = $1)::int AS deliveries,
                (SELECT count(*) FROM "${schema}".endpoints WHERE account_id = $1)::int AS endpoints,
                (SELECT count(*) FROM "${schema}".accounts WHERE id = $1)::int AS accounts,
                (SELECT count(*) FROM "${schema}".events WHERE account_id = $2)::int AS kept`,
        [account.id, kept.id],
      );
      expect(left.rows[0]).toEqual({ events: 0, deliveries: 0, endpoints: 0, accounts: 0, kept: 1 });
      // After the row is gone, the account is still refused, not taken for one the store never had.
      await expect(publishers[0]!.publish(account.id, input)).rejects.toMatchObject({ code: 'not_found' });
      // An account id the store never had publishes as ever (the library's own accounts).
      await expect(publishers[1]!.publish('acct_library', input)).resolves.toMatchObject({ deliveries: [] });
    } finally {
      for (const s of [deleter, ...publishers]) await s!.stop();
      for (const store of stores) await store.close();
    }
  });
});

/**
 * The SQL copies of the domain's rules (src/store/sql-rules.ts) held equal to the domain on the
 * same cases, in both databases they run in.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLAIMABLE_STATUSES,
  DELIVERY_STATUSES,
  FINAL_STATUSES,
  QUEUED_STATUSES,
  resumeStatus,
} from '../src/domain/delivery-state.js';
import { previousSecretValid } from '../src/domain/secret-rotation.js';
import { newDelivery } from '../src/store/new-delivery.js';
import {
  CLAIMABLE_SQL,
  FINAL_SQL,
  heldIfDisabledSql,
  isFinalSql,
  isQueuedSql,
  newDeliverySql,
  previousSecretSql,
  QUEUED_SQL,
  RESUME_STATUS_SQL,
} from '../src/store/sql-rules.js';
import { PG_URL, requireService } from './helpers/services.js';

type Query = (sql: string) => Promise<unknown>;

/** Cases: every status as the current one, every decided status, attempts 0 to 6. */
const decided = ['delivered', 'awaiting_retry', 'failed'] as const;

function rules(name: string, scalar: Query) {
  describe(`the SQL rules in ${name}`, () => {
    it('resume a delivery as resumeStatus does', async () => {
      for (let attempts = 0; attempts <= 6; attempts++) {
        const sql = `SELECT ${RESUME_STATUS_SQL} AS v FROM (SELECT ${attempts} AS attempts) AS d`;
        expect(await scalar(sql)).toBe(resumeStatus(attempts));
      }
    });

    it('claim and prune the statuses the domain names', async () => {
      for (const status of DELIVERY_STATUSES) {
        expect(await scalar(`SELECT CASE WHEN '${status}' IN ${CLAIMABLE_SQL} THEN 1 ELSE 0 END AS v`)).toBe(
          (CLAIMABLE_STATUSES as readonly string[]).includes(status) ? 1 : 0,
        );
        expect(await scalar(`SELECT CASE WHEN '${status}' IN ${FINAL_SQL} THEN 1 ELSE 0 END AS v`)).toBe(
          (FINAL_STATUSES as readonly string[]).includes(status) ? 1 : 0,
        );
        expect(await scalar(`SELECT CASE WHEN '${status}' IN ${QUEUED_SQL} THEN 1 ELSE 0 END AS v`)).toBe(
          (QUEUED_STATUSES as readonly string[]).includes(status) ? 1 : 0,
        );
        expect(await scalar(`SELECT CASE WHEN ${isQueuedSql(`'${status}'`)} THEN 1 ELSE 0 END AS v`)).toBe(
          (QUEUED_STATUSES as readonly string[]).includes(status) ? 1 : 0,
        );
        expect(await scalar(`SELECT CASE WHEN ${isFinalSql(`'${status}'`)} THEN 1 ELSE 0 END AS v`)).toBe(
          (FINAL_STATUSES as readonly string[]).includes(status) ? 1 : 0,
        );
      }
    });

    it('make a new delivery as newDelivery does, for an enabled, a paused and a disabled endpoint', async () => {
      const event = { id: 'evt', accountId: 'a', name: 'click', body: new Uint8Array(), createdAt: 1234 };
      const seen = new Set<string>();
      for (const enabled of [true, false]) {
        for (const paused of [true, false]) {
          const sql = newDeliverySql(enabled ? '1 = 1' : '1 = 0', paused ? '1 = 1' : '1 = 0', '1234');
          const made = newDelivery(event, { id: 'ep', enabled, paused }, 'dlv');
          seen.add(made.status);
          expect(await scalar(`SELECT ${sql.status} AS v`)).toBe(made.status);
          const at = await scalar(`SELECT ${sql.nextAttemptAt} AS v`);
          expect(at === null ? null : Number(at)).toBe(made.nextAttemptAt);
        }
      }
      expect([...seen].sort()).toEqual(['held', 'pending', 'skipped']);
    });

    it('hand out the previous secret exactly while previousSecretValid says it is valid', async () => {
      const now = 1_000_000;
      for (const previous of [null, 'whsec_old']) {
        for (const expiresAt of [null, now - 1, now, now + 1]) {
          const row = `(SELECT ${previous === null ? 'NULL' : `'${previous}'`} AS previous_secret, ${
            expiresAt === null ? 'CAST(NULL AS BIGINT)' : expiresAt
          } AS previous_secret_expires_at) AS e`;
          const v = await scalar(`SELECT ${previousSecretSql('e', String(now))} AS v FROM ${row}`);
          const valid = previousSecretValid(
            { secret: 'whsec_new', previousSecret: previous, previousSecretExpiresAt: expiresAt },
            now,
          );
          expect(v ?? null).toBe(valid ? previous : null);
        }
      }
    });

    it('hold a retry exactly when the row was held by a disabling (decideTransition)', async () => {
      for (const next of decided) {
        for (const current of DELIVERY_STATUSES) {
          const sql = `SELECT ${heldIfDisabledSql(`'${next}'`, `'${current}'`)} AS v`;
          const expected = next === 'awaiting_retry' && current === 'held' ? 'held' : next;
          expect(await scalar(sql)).toBe(expected);
        }
      }
    });
  });
}

const sqlite = new Database(':memory:');
afterAll(() => sqlite.close());
rules('SQLite', async (sql) => (sqlite.prepare(sql).get() as { v: unknown }).v);

const pgUp = await requireService('PostgreSQL', PG_URL);
describe.runIf(pgUp)('PostgreSQL', () => {
  const client = new pg.Client({ connectionString: PG_URL });
  const connected = client.connect();
  afterAll(() => client.end());
  rules('PostgreSQL', async (sql) => {
    await connected;
    return (await client.query(sql)).rows[0].v;
  });
});

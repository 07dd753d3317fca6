/** Reading PostgreSQL plans in tests: what a statement actually read, under the plan the store runs. */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { PLAN_SETTINGS } from '../../src/store/postgres/connection.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'CTE Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The plan's nodes, `node` and every node below it. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Rows the plan's scans of `relation` read, kept or filtered out, over all their loops. */
export const rowsRead = (plan: PlanNode, relation: string): number =>
  sum(
    planNodes(plan)
      .filter((n) => n['Relation Name'] === relation && /Scan/.test(n['Node Type']))
      .map(
        (n) =>
          (n['Actual Rows'] +
            (n['Rows Removed by Filter'] ?? 0) +
            (n['Rows Removed by Index Recheck'] ?? 0)) *
          n['Actual Loops'],
      ),
  );

/** Index entries the plan's scans of `index` returned (filtered out ones included), over all their loops. */
export const indexRead = (plan: PlanNode, index: string): number =>
  sum(
    planNodes(plan)
      .filter((n) => n['Index Name'] === index)
      .map((n) => (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops']),
  );

/** The plan's scans of `index` whose condition matches `cond`, with the loops each ran. */
export const indexScans = (plan: PlanNode, index: string, cond: RegExp): PlanNode[] =>
  planNodes(plan).filter((n) => n['Index Name'] === index && cond.test(n['Index Cond'] ?? ''));

/**
 * Every scan of a part of a statement (a CTE), with the loops it ran: a part joined to another's
 * rows by a nested loop is read again for each of them.
 */
export const cteScans = (plan: PlanNode): { part: string; loops: number }[] =>
  planNodes(plan)
    .filter((n) => n['Node Type'] === 'CTE Scan')
    .map((n) => ({ part: n['CTE Name']!, loops: n['Actual Loops'] }));

/** The plan's nodes of one type (`LockRows`, say), wherever they are. */
export const nodesOfType = (plan: PlanNode, type: string): PlanNode[] =>
  planNodes(plan).filter((n) => n['Node Type'] === type);

// pg's own text form of a parameter (arrays included), which it sends in a bind message; a Buffer
// it sends as binary, so here it is written as bytea's hex text.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as {
  prepareValue(value: unknown): unknown;
};
const textOf = (value: unknown) =>
  Buffer.isBuffer(value) ? `\\x${value.toString('hex')}` : String(prepareValue(value));

/**
 * Makes `client` plan as the store's connections do (PLAN_SETTINGS, connection.ts): for this
 * session, or with `local` for its transaction only.
 */
export async function planAsTheStore(client: pg.ClientBase, local = false): Promise<void> {
  for (const [name, value] of Object.entries(PLAN_SETTINGS))
    await client.query(`SET ${local ? 'LOCAL ' : ''}${name} = ${value}`);
}

/**
 * EXPLAIN ANALYZE of `sql` prepared on `client` and run with its generic plan and without JIT, as
 * the store's connections run their statements (plan_cache_mode, jit: connection.ts), in a
 * transaction rolled back after. `params` are the values the store passes (as SQL literals here);
 * their types are the casts `sql` gives them. Left on, JIT compiled the log's pages, whose generic
 * plans cost more than `jit_above_cost`, for about a second each.
 *
 * With `meanwhile`, the plan is made first, by a run of the statement (rolled back), and
 * `meanwhile` runs before it is read: what a statement prepared on a connection long ago reads now.
 */
export async function genericPlan(
  client: pg.PoolClient,
  sql: string,
  params: unknown[],
  meanwhile?: (client: pg.PoolClient) => Promise<void>,
): Promise<PlanNode> {
  // EXECUTE takes literals, not bound parameters: each value in pg's text form, quoted.
  const args = params.map((v) => (v == null ? 'NULL' : client.escapeLiteral(textOf(v))));
  const name = `plan_${Math.random().toString(36).slice(2)}`;
  const execute = `EXECUTE ${name} ${args.length ? `(${args.join(', ')})` : ''}`;
  await planAsTheStore(client);
  await client.query(`PREPARE ${name} AS ${sql}`);
  if (meanwhile) {
    await client.query('BEGIN');
    await client.query(execute).finally(() => client.query('ROLLBACK'));
    await meanwhile(client);
  }
  await client.query('BEGIN');
  try {
    const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${execute}`);
    return rows[0]['QUERY PLAN'][0].Plan;
  } finally {
    await client.query('ROLLBACK');
    await client.query(`DEALLOCATE ${name}`);
  }
}

/**
 * Runs `read` with `plan(sql, params)` (genericPlan) on a connection of `pool` whose search_path is
 * `schema`. The connection is dropped after, not returned to the pool: genericPlan changed its
 * plan_cache_mode and jit.
 */
export async function withPlans<T>(
  pool: pg.Pool,
  schema: string,
  read: (
    plan: (
      sql: string,
      params: unknown[],
      meanwhile?: (client: pg.PoolClient) => Promise<void>,
    ) => Promise<PlanNode>,
  ) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(`SET search_path = "${schema}"`);
    return await read((sql, params, meanwhile) => genericPlan(client, sql, params, meanwhile));
  } finally {
    client.release(true);
  }
}

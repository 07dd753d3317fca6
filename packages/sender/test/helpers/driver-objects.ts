/**
 * Watches better-sqlite3 in this process for what leaves an object of the driver's to the garbage
 * collector (store/sqlite/database.ts): a statement iterator, a `pragma` call (which prepares a
 * statement for it), or a statement prepared a second time on one connection.
 */
import Database from 'better-sqlite3';

type Methods = Record<string, (this: object, ...args: unknown[]) => unknown>;

export function watchDriverObjects() {
  const seen: string[] = [];
  const prepared = new WeakMap<object, Set<string>>();
  const database = Database.prototype as unknown as Methods;
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Methods;
  probe.close();
  const original = { prepare: database.prepare!, pragma: database.pragma!, iterate: statement.iterate! };
  const short = (sql: unknown) => String(sql).replace(/\s+/g, ' ').trim().slice(0, 100);
  database.prepare = function (sql, ...rest) {
    const mine = prepared.get(this) ?? new Set<string>();
    prepared.set(this, mine);
    if (mine.has(sql as string)) seen.push(`prepared again: ${short(sql)}`);
    mine.add(sql as string);
    return original.prepare.call(this, sql, ...rest);
  };
  database.pragma = function (source, ...rest) {
    seen.push(`pragma: ${short(source)}`);
    return original.pragma.call(this, source, ...rest);
  };
  statement.iterate = function (...args) {
    seen.push(`iterate: ${short((this as { source: string }).source)}`);
    return original.iterate.apply(this, args);
  };
  return {
    /** What left an object to the collector, in order. */
    seen,
    restore() {
      Object.assign(database, { prepare: original.prepare, pragma: original.pragma });
      statement.iterate = original.iterate;
    },
  };
}

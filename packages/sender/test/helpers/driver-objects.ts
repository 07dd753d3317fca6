/**
 * Watches better-sqlite3 in this process for what leaves an object of the driver's to the garbage
 * collector while its connection is open (store/sqlite/database.ts): a statement iterator, a
 * `pragma` call (which prepares a statement for it), or a statement prepared other than by the
 * connection's cache (`st`), or prepared by it twice.
 */
import Database from 'better-sqlite3';

type Methods = Record<string, (this: object, ...args: unknown[]) => unknown>;

// The watch's own probe, kept like the store's objects.
const probe = new Database(':memory:');
const probeStatement = probe.prepare('SELECT 1');

/** The frame that called the watched method: the cache's is `st` in database.ts. */
const fromCache = () => /\bst \(.*[\\/]database\.ts:/.test(new Error().stack?.split('\n')[3] ?? '');

export function watchDriverObjects() {
  const seen: string[] = [];
  const prepared = new WeakMap<object, Set<string>>();
  const database = Database.prototype as unknown as Methods;
  const statement = Object.getPrototypeOf(probeStatement) as Methods;
  const original = { prepare: database.prepare!, pragma: database.pragma!, iterate: statement.iterate! };
  const short = (sql: unknown) => String(sql).replace(/\s+/g, ' ').trim().slice(0, 100);
  database.prepare = function (sql, ...rest) {
    const mine = prepared.get(this) ?? new Set<string>();
    prepared.set(this, mine);
    if (!fromCache()) seen.push(`prepared outside the cache: ${short(sql)}`);
    else if (mine.has(sql as string)) seen.push(`prepared again: ${short(sql)}`);
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
      probe.close();
    },
  };
}

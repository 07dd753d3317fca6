/**
 * The in-memory store, for tests and trials: the SQLite store on a database that lives in memory.
 * It keeps every invariant the file store keeps (the same code), and nothing survives the process.
 */
import type { SenderStore } from './port.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';

/** @example const sender = createSender({ store: createMemoryStore() }); */
export function createMemoryStore(): SenderStore {
  const store = createSqliteStore({ filename: ':memory:' });
  // Migrating runs synchronously on SQLite: the store is ready when this returns.
  void store.migrate();
  return store;
}

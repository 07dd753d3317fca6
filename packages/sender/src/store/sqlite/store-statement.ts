/**
 * A prepared statement as the store's code sees it, its rows made here from the driver's arrays:
 * on Node.js 20 the driver makes each row's object through V8's API a property at a time, the
 * column's name made a string again for each (design D73).
 */
import type Database from 'better-sqlite3';

/**
 * A cached statement as the store's code sees it: rows are read whole, and it leads back to no
 * connection (the driver's `iterate()` and `database` are left out).
 */
export interface StoreStatement {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows as their first column's value. */
  pluck(toggle?: boolean): StoreStatement;
}

type Row = Record<string, unknown>;

/** Rows of the statement's columns (`names`, in order; a later column of a name wins, as in the driver's). */
function rowsOf(names: string[]) {
  // Every row a copy of one object with the columns' names as keys: all of them share its shape.
  const blank: Row = Object.fromEntries(names.map((name) => [name, null]));
  return (values: unknown[]): Row => {
    const row = { ...blank };
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  };
}

/** `statement` as a StoreStatement: one that returns rows reads them as arrays (the driver's raw mode). */
export function storeStatement(statement: Database.Statement): StoreStatement {
  if (!statement.reader) return statement;
  statement.raw(true);
  let names = statement.columns().map((c) => c.name);
  let row = rowsOf(names);
  let plucked = false;
  const toRow = (values: unknown[]): Row => {
    // The columns are those of the statement as last prepared: `*` gives more after a migration.
    // Names are read again when their number changes; no migration renames a column a statement
    // reads (a rename would keep the old names here).
    if (values.length !== names.length) {
      names = statement.columns().map((c) => c.name);
      row = rowsOf(names);
    }
    return row(values);
  };
  const view: StoreStatement = {
    run: (...params) => statement.run(...params),
    get(...params) {
      const values = statement.get(...params);
      return plucked || values === undefined ? values : toRow(values as unknown[]);
    },
    all(...params) {
      const rows = statement.all(...params);
      if (!plucked) for (let i = 0; i < rows.length; i++) rows[i] = toRow(rows[i] as unknown[]);
      return rows;
    },
    pluck(toggle = true) {
      plucked = toggle;
      // The driver's modes exclude each other: plucking leaves raw mode, and back.
      if (toggle) statement.pluck(true);
      else statement.raw(true);
      return view;
    },
  };
  return view;
}

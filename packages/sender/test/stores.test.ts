import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/store/memory-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { watchDriverObjects } from './helpers/driver-objects.js';
import { storeBattery } from './helpers/store-battery.js';
import { endpointOptionsBattery } from './helpers/store-battery-endpoint-options.js';

const driver = watchDriverObjects();
afterAll(() => driver.restore());

storeBattery('memory', async () => createMemoryStore());

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
storeBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `store-${n++}.db`) }));

let m = 0;
endpointOptionsBattery('memory', async () => createMemoryStore());
endpointOptionsBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `options-${m++}.db`) }));

// Last in the file: every SQLite battery above has run through the watched driver.
describe('the SQLite store and the garbage collector', () => {
  it("leaves none of the driver's objects to it: no iterator, no pragma's statement, each statement prepared once by the connection's cache", () => {
    expect(driver.seen).toEqual([]);
  });
});

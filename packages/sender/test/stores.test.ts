import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryStore } from '../src/store/memory-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeBattery } from './helpers/store-battery.js';
import { endpointOptionsBattery } from './helpers/store-battery-endpoint-options.js';

storeBattery('memory', async () => createMemoryStore());

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
storeBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `store-${n++}.db`) }));

let m = 0;
endpointOptionsBattery('memory', async () => createMemoryStore());
endpointOptionsBattery('sqlite', async () => createSqliteStore({ filename: join(dir, `options-${m++}.db`) }));

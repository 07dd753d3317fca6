import { describe, expect, it } from 'vitest';
import { driverFailure } from './sqlite-driver.js';

const REBUILD = 'run `npm rebuild better-sqlite3` in the project, then start again';
const failed = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('driverFailure', () => {
  it('names the Node.js version a driver built for another one needs, and the rebuild', () => {
    const error = failed(
      "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 127. This version of Node.js requires\nNODE_MODULE_VERSION 115.",
      'ERR_DLOPEN_FAILED',
    );
    expect(driverFailure(error)?.message).toBe(
      `the SQLite driver (better-sqlite3) was built for another Node.js version (module version 127), not for this one (Node.js ${process.versions.node}, module version ${process.versions.modules}): ${REBUILD}`,
    );
  });

  it('says a driver installed without its build is not built', () => {
    const error = failed('Could not locate the bindings file. Tried:\n → /app/build/better_sqlite3.node');
    expect(driverFailure(error)?.message).toBe(`the SQLite driver (better-sqlite3) is not built: ${REBUILD}`);
  });

  it('gives the first line of any other load failure', () => {
    const error = failed(
      "/lib/libc.so.6: version `GLIBC_2.38' not found\n(required by …)",
      'ERR_DLOPEN_FAILED',
    );
    expect(driverFailure(error)?.message).toBe(
      `the SQLite driver (better-sqlite3) cannot be loaded (/lib/libc.so.6: version \`GLIBC_2.38' not found): ${REBUILD}`,
    );
  });

  it('leaves every other failure to its caller', () => {
    expect(
      driverFailure(failed('SQLITE_CANTOPEN: unable to open database file', 'SQLITE_CANTOPEN')),
    ).toBeNull();
    expect(driverFailure('a string')).toBeNull();
    expect(driverFailure(undefined)).toBeNull();
  });
});

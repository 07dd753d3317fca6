import { describe, expect, it } from 'vitest';
import { STORE_RETRY_AFTER_SECONDS, storeUnavailable } from './unavailable.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('storeUnavailable', () => {
  it.each([
    ['a connection refused', withCode('ECONNREFUSED')],
    ['a connection reset', withCode('ECONNRESET')],
    ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
    ['PostgreSQL shutting down', withCode('57P01')],
    ['PostgreSQL starting', withCode('57P03')],
    ['a connection failure', withCode('08006')],
    ['too many connections', withCode('53300')],
    ['a full disk', withCode('53100')],
    ['a connection ended under a query', new Error('Connection terminated unexpectedly')],
    ["pg-pool's wait for a connection", new Error('timeout exceeded when trying to connect')],
    ['a new connection not made within its timeout', new Error('timeout expired')],
    ['a locked SQLite file', withCode('SQLITE_BUSY')],
    ['a full SQLite disk', withCode('SQLITE_FULL')],
  ])('takes %s as one to try again', (_, error) => {
    const answer = storeUnavailable(error);
    expect(answer).toMatchObject({ code: 'store_unavailable', retryAfterSeconds: STORE_RETRY_AFTER_SECONDS });
    expect(answer?.cause).toBe(error);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a deadlock', withCode('40P01')],
    ['a syntax error', withCode('42601')],
    ['a SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a statement with the wrong parameters (protocol violation)', withCode('08P01')],
    ['a query over its temp file limit', withCode('53400')],
    ['a query out of memory', withCode('53200')],
    ['a table locked within one SQLite connection', withCode('SQLITE_LOCKED')],
    ['a bug', new TypeError('x is undefined')],
    ['an aggregate with a bug in it', new AggregateError([withCode('ECONNREFUSED'), new Error('bug')])],
    ['not an error', 'ECONNREFUSED'],
  ])('leaves %s alone', (_, error) => {
    expect(storeUnavailable(error)).toBeNull();
  });
});

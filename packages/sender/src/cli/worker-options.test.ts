import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from './options.js';

const listenOf = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand(['worker', ...argv], { LINKHOOKS_DB: 'sqlite:test.db', ...env });
  if (command.kind !== 'worker') throw new Error(command.kind);
  return command.listen;
};

describe('worker --port and --host', () => {
  it('listen nowhere unless a port is given, by flag or by the worker variable, a flag first', () => {
    expect(listenOf([])).toBeUndefined();
    expect(listenOf(['--port', '9100'])).toEqual({ port: 9100, host: '127.0.0.1' });
    expect(listenOf([], { LINKHOOKS_WORKER_PORT: '9101', LINKHOOKS_WORKER_HOST: '0.0.0.0' })).toEqual({
      port: 9101,
      host: '0.0.0.0',
    });
    expect(listenOf(['--port', '9102', '--host', '::1'], { LINKHOOKS_WORKER_PORT: '9101' })).toEqual({
      port: 9102,
      host: '::1',
    });
  });

  it("ignore serve's variables: a worker started with serve's environment does not take its port", () => {
    expect(listenOf([], { LINKHOOKS_PORT: '8080', LINKHOOKS_HOST: '0.0.0.0' })).toBeUndefined();
  });

  it('refuse a host without a port, and a port that is not one, naming the setting', () => {
    expect(() => listenOf(['--host', '0.0.0.0'])).toThrow(
      new UsageError('--host needs a port: --port or LINKHOOKS_WORKER_PORT'),
    );
    expect(() => listenOf([], { LINKHOOKS_WORKER_HOST: '0.0.0.0' })).toThrow(
      new UsageError('LINKHOOKS_WORKER_HOST needs a port: --port or LINKHOOKS_WORKER_PORT'),
    );
    expect(() => listenOf([], { LINKHOOKS_WORKER_PORT: 'ninety' })).toThrow(
      new UsageError('LINKHOOKS_WORKER_PORT must be a whole number from 0 to 65535'),
    );
  });
});

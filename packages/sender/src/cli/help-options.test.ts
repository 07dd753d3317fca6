import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from './options.js';

const env = { LINKHOOKS_DB: 'sqlite:test.db' };

describe('--help and -h after a command', () => {
  it('ask for the usage, whatever required flag is missing', () => {
    for (const argv of [
      ['serve', '--help'],
      ['serve', '--port', '9000', '-h'],
      ['worker', '--help'],
      ['migrate', '-h'],
      ['rotate-master-key', '--help'],
      ['dev-certificate', '--help'],
      ['accounts', '--help'],
      ['accounts', '-h'],
      ['accounts', 'create', '--help'],
      ['accounts', 'list', '-h'],
      ['accounts', 'delete', '--id', 'acct_x', '--help'],
    ]) {
      // `accounts create` lacks --name and --plan, `accounts delete` lacks --yes.
      expect(parseCommand(argv, {}), argv.join(' ')).toEqual({ kind: 'help' });
    }
  });

  it('leave other flags as they were: an unknown one is still a usage error, with --help or not', () => {
    expect(() => parseCommand(['serve', '--bogus', '--help'], env)).toThrow(UsageError);
    expect(() => parseCommand(['serve', '--hlp'], env)).toThrow(UsageError);
    expect(parseCommand(['migrate'], env)).toEqual({ kind: 'migrate', db: 'sqlite:test.db' });
  });
});

import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from './options.js';

const env = { LINKHOOKS_DB: 'sqlite:test.db' };

describe('--help and -h after a command', () => {
  it('ask for the usage, whatever else is given and whatever is missing', () => {
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
      // No database is named for most of these, and `accounts create` lacks --name and --plan.
      expect(parseCommand(argv, {}), argv.join(' ')).toEqual({ kind: 'help' });
    }
  });

  it('leave other flags as they were: an unknown one is still a usage error', () => {
    expect(() => parseCommand(['serve', '--hlp'], env)).toThrow(UsageError);
    expect(parseCommand(['migrate'], env)).toEqual({ kind: 'migrate', db: 'sqlite:test.db' });
  });
});

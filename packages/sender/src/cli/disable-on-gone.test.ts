import { describe, expect, it } from 'vitest';
import { parseCommand, USAGE, UsageError } from './options.js';

const engineOf = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand(argv, { LINKHOOKS_DB: 'sqlite:test.db', ...env });
  if (command.kind !== 'serve' && command.kind !== 'worker') throw new Error(command.kind);
  return command.engine;
};

describe('--disable-on-gone (design D41)', () => {
  it('is off by default, on with the flag or LINKHOOKS_DISABLE_ON_GONE, for serve and worker', () => {
    expect(engineOf(['serve']).disableOnGone).toBe(false);
    expect(engineOf(['worker']).disableOnGone).toBe(false);
    expect(engineOf(['serve', '--disable-on-gone']).disableOnGone).toBe(true);
    expect(engineOf(['worker', '--disable-on-gone']).disableOnGone).toBe(true);
    expect(engineOf(['worker'], { LINKHOOKS_DISABLE_ON_GONE: '1' }).disableOnGone).toBe(true);
    expect(engineOf(['worker'], { LINKHOOKS_DISABLE_ON_GONE: 'false' }).disableOnGone).toBe(false);
  });

  it('refuses a variable it cannot read, and is in the usage', () => {
    expect(() => engineOf(['serve'], { LINKHOOKS_DISABLE_ON_GONE: 'yes' })).toThrow(UsageError);
    expect(USAGE).toMatch(/--disable-on-gone/);
    expect(USAGE).toMatch(/LINKHOOKS_DISABLE_ON_GONE/);
  });
});

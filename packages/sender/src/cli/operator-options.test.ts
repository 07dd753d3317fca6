import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withCaFile } from './ca-file.js';
import { parseCommand, USAGE, UsageError } from './options.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1rcp2V6AMwI=';
const engineOf = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand(argv, { LINKHOOKS_DB: 'sqlite:test.db', ...env });
  if (command.kind !== 'serve' && command.kind !== 'worker') throw new Error(command.kind);
  return command.engine;
};
const refused = (argv: string[], env: Record<string, string>, message: RegExp) => {
  expect(() => engineOf(argv, env)).toThrow(UsageError);
  expect(() => engineOf(argv, env)).toThrow(message);
};

describe('operator notifications (design D50)', () => {
  it('are off by default, on with --operator-url or LINKHOOKS_OPERATOR_URL, for serve and worker', () => {
    expect(engineOf(['serve']).operatorNotifications).toBeUndefined();
    const env = { LINKHOOKS_OPERATOR_SECRET: SECRET };
    expect(
      engineOf(['serve', '--operator-url', 'https://ops.example.com/in'], env).operatorNotifications,
    ).toEqual({
      url: 'https://ops.example.com/in',
      secret: SECRET,
    });
    expect(
      engineOf(['worker', '--operator-failing-share', '0.3'], {
        ...env,
        LINKHOOKS_OPERATOR_URL: 'https://ops.example.com/in',
      }).operatorNotifications,
    ).toMatchObject({ failingShare: 0.3 });
    expect(USAGE).toMatch(/--operator-url URL/);
  });

  it('refuses plain HTTP, a missing or short secret, a bad share and a share without a URL', () => {
    const env = { LINKHOOKS_OPERATOR_SECRET: SECRET };
    refused(
      ['serve', '--operator-url', 'http://ops.example.com/in'],
      env,
      /^--operator-url: .*must use https/,
    );
    refused(
      ['serve'],
      { ...env, LINKHOOKS_OPERATOR_URL: 'http://ops.example.com/in' },
      /^LINKHOOKS_OPERATOR_URL: .*must use https/,
    );
    refused(
      ['serve', '--operator-url', 'https://ops.example.com/in'],
      {},
      /^--operator-url needs LINKHOOKS_OPERATOR_SECRET/,
    );
    refused(
      ['serve', '--operator-url', 'https://ops.example.com/in'],
      { LINKHOOKS_OPERATOR_SECRET: 'x' },
      /^LINKHOOKS_OPERATOR_SECRET: .*at least 32/,
    );
    for (const share of ['0', '1', '2', 'half', '.']) {
      refused(
        ['serve', '--operator-url', 'https://ops.example.com/in', '--operator-failing-share', share],
        env,
        /--operator-failing-share: the failing share must be a number above 0 and below 1/,
      );
    }
    refused(
      ['serve', '--operator-url', 'https://ops.example.com/in'],
      { ...env, LINKHOOKS_OPERATOR_FAILING_SHARE: '2' },
      /^LINKHOOKS_OPERATOR_FAILING_SHARE: the failing share must be/,
    );
    refused(
      ['serve', '--operator-failing-share', '0.5'],
      env,
      /^--operator-failing-share needs --operator-url/,
    );
    refused(
      ['serve'],
      { ...env, LINKHOOKS_OPERATOR_FAILING_SHARE: '0.5' },
      /^LINKHOOKS_OPERATOR_FAILING_SHARE needs --operator-url/,
    );
    refused(
      ['serve'],
      { LINKHOOKS_OPERATOR_URL: 'https://ops.example.com/in' },
      /^LINKHOOKS_OPERATOR_URL needs LINKHOOKS_OPERATOR_SECRET/,
    );
  });
});

describe('the other settings a refusal names', () => {
  it('names the CA file by the flag or the variable that gave it, when it cannot be read or is not PEM', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ca-file-'));
    try {
      const notPem = join(dir, 'not.pem');
      writeFileSync(notPem, 'plain text');
      const missing = join(dir, 'missing.pem');
      const read = (argv: string[], env: Record<string, string>) => () => withCaFile(engineOf(argv, env));
      expect(read(['serve', '--ca-file', missing], {})).toThrow(
        /^--ca-file: cannot read .*missing\.pem \(no such file\)/,
      );
      expect(read(['serve'], { LINKHOOKS_CA_FILE: missing })).toThrow(/^LINKHOOKS_CA_FILE: cannot read/);
      expect(read(['serve'], { LINKHOOKS_CA_FILE: notPem })).toThrow(
        /^LINKHOOKS_CA_FILE: .*not\.pem holds no PEM/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says whether the flag or the variable held the refused value', () => {
    refused(['serve', '--time-scale', '0'], {}, /^--time-scale must be a number above 0/);
    refused(['serve'], { LINKHOOKS_TIME_SCALE: 'fast' }, /^LINKHOOKS_TIME_SCALE must be a number above 0/);
    refused(['serve', '--ca-file', ''], {}, /^--ca-file needs the path of a PEM file/);
    refused(['serve'], { LINKHOOKS_CA_FILE: '' }, /^LINKHOOKS_CA_FILE needs the path of a PEM file/);
    refused(['serve', '--port', 'eighty'], {}, /^--port must be a whole number/);
    refused(['serve'], { LINKHOOKS_PORT: '70000' }, /^LINKHOOKS_PORT must be a whole number/);
  });
});

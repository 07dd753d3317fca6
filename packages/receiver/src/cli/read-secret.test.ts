import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSecret } from './read-secret.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

describe('resolveSecret', () => {
  it('takes --secret, then --secret-file, then LINKHOOKS_SECRET', () => {
    const env = { LINKHOOKS_SECRET: 'whsec_env' };
    expect(resolveSecret({ secret: 'whsec_flag', env })).toBe('whsec_flag');
    expect(resolveSecret({ secretFile: file('a', 'whsec_file'), env })).toBe('whsec_file');
    expect(resolveSecret({ env })).toBe('whsec_env');
  });

  it('drops one final newline from the file, and nothing else', () => {
    expect(resolveSecret({ secretFile: file('lf', 'whsec_a\n'), env: {} })).toBe('whsec_a');
    expect(resolveSecret({ secretFile: file('crlf', 'whsec_b\r\n'), env: {} })).toBe('whsec_b');
    // Anything more is kept, so `verify` can still point at whitespace around a secret.
    expect(resolveSecret({ secretFile: file('two', ' whsec_c\n\n'), env: {} })).toBe(' whsec_c\n');
  });

  it('refuses both flags, an empty or unreadable file, and no secret at all', () => {
    const path = file('ok', 'whsec_ok');
    expect(() => resolveSecret({ secret: 'whsec_x', secretFile: path, env: {} })).toThrow(/not both/);
    expect(() => resolveSecret({ secretFile: file('empty', ''), env: {} })).toThrow(/is empty/);
    expect(() => resolveSecret({ secretFile: join(dir, 'missing'), env: {} })).toThrow(/no such file/);
    expect(() => resolveSecret({ secretFile: dir, env: {} })).toThrow(/it is a folder/);
    expect(() => resolveSecret({ secretFile: '-', env: {} })).toThrow(/standard input/);
    expect(() => resolveSecret({ env: { LINKHOOKS_SECRET: '' } })).toThrow(/a secret is required/);
  });
});

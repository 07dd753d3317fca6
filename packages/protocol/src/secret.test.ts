import { describe, expect, it } from 'vitest';
import { generateSecret, isSecretForm, SECRET_PREFIX, unusableSecret } from './secret.js';
import { sign, verifySignature } from './signature.js';

describe('generateSecret', () => {
  it('is whsec_ followed by 44 characters of padded standard base64', () => {
    const secret = generateSecret();
    expect(SECRET_PREFIX).toBe('whsec_');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).toHaveLength(50);
  });

  it('decodes to exactly 32 bytes that re-encode to the same text', () => {
    for (let i = 0; i < 50; i++) {
      const encoded = generateSecret().slice('whsec_'.length);
      const bytes = Buffer.from(encoded, 'base64');
      expect(bytes).toHaveLength(32);
      expect(bytes.toString('base64')).toBe(encoded);
    }
  });

  it('is unique over many calls and uses the whole alphabet', () => {
    const secrets = Array.from({ length: 5000 }, () => generateSecret());
    expect(new Set(secrets).size).toBe(secrets.length);
    // 5000 × 43 random characters: every one of the 64 base64 symbols shows up (the 44th is '=').
    const seen = new Set(secrets.flatMap((s) => [...s.slice(6, -1)]));
    expect(seen.size).toBe(64);
  });

  it('is a usable HMAC key', () => {
    const secret = generateSecret();
    const body = '{"event":"click"}';
    expect(verifySignature(body, sign(body, secret), secret)).toEqual({
      valid: true,
      reason: null,
      secretIndex: 0,
    });
  });
});

describe('isSecretForm', () => {
  it('accepts generated secrets, and the earlier base64url form', () => {
    for (let i = 0; i < 100; i++) expect(isSecretForm(generateSecret())).toBe(true);
    expect(isSecretForm(`whsec_${'A'.repeat(43)}`)).toBe(true);
    expect(isSecretForm(`whsec_${'-_'.repeat(21)}z`)).toBe(true);
    expect(isSecretForm(`whsec_${'+/'.repeat(21)}z=`)).toBe(true);
  });

  it.each([
    ['42 characters', `whsec_${'A'.repeat(42)}`],
    ['44 characters', `whsec_${'A'.repeat(44)}`],
    ['no prefix', 'A'.repeat(43)],
    ['other prefix', `whsek_${'A'.repeat(43)}`],
    ['uppercase prefix', `WHSEC_${'A'.repeat(43)}`],
    ['base64url mixed with padding', `whsec_${'A'.repeat(42)}-=`],
    ['base64 without padding', `whsec_${'A'.repeat(42)}+`],
    ['padding after 42', `whsec_${'A'.repeat(42)}=`],
    ['double padding', `whsec_${'A'.repeat(42)}==`],
    ['trailing newline', `whsec_${'A'.repeat(43)}\n`],
    ['leading space', ` whsec_${'A'.repeat(43)}`],
    ['non-ASCII', `whsec_${'A'.repeat(42)}é`],
    ['empty', ''],
  ])('rejects %s', (_, value) => {
    expect(isSecretForm(value)).toBe(false);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['number', 1],
    ['array', [`whsec_${'A'.repeat(43)}`]],
    ['boxed string', new String(`whsec_${'A'.repeat(43)}`)],
  ])('rejects a non-string: %s', (_, value) => {
    expect(isSecretForm(value)).toBe(false);
  });
});

describe('unusableSecret', () => {
  it('takes any other string, a test secret included', () => {
    expect(unusableSecret(generateSecret())).toBeNull();
    expect(unusableSecret('whsec_test')).toBeNull();
    expect(unusableSecret('undefined-but-longer')).toBeNull();
  });

  it('refuses what is no secret, saying why', () => {
    expect(unusableSecret(undefined)).toMatch(/non-empty string/);
    expect(unusableSecret('')).toMatch(/non-empty string/);
    expect(unusableSecret(' \n')).toMatch(/blank/);
    expect(unusableSecret(`${process.env.LINKHOOKS_NO_SUCH_VARIABLE}`)).toMatch(
      /"undefined": the variable it was read from is not set/,
    );
    expect(unusableSecret('null\n')).toMatch(/"null"/);
    // The prefix written before a variable that is not set.
    expect(unusableSecret(`whsec_${process.env.LINKHOOKS_NO_SUCH_VARIABLE}`)).toMatch(
      /"whsec_undefined": the variable it was read from is not set/,
    );
    expect(unusableSecret('whsec_null')).toMatch(/"whsec_null"/);
    expect(unusableSecret('whsec_')).toBe('The secret is only the prefix whsec_, with nothing after it.');
    expect(unusableSecret('whsec_undefinedX')).toBeNull();
  });
});

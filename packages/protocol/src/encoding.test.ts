import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64, toBase64Url } from './encoding.js';

describe('fromBase64', () => {
  it('decodes any bytes written in either alphabet, with or without padding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        expect(fromBase64(toBase64(bytes))).toEqual(bytes);
        expect(fromBase64(toBase64Url(bytes))).toEqual(bytes);
        expect(fromBase64(toBase64(bytes).replace(/=+$/, ''))).toEqual(bytes);
      }),
    );
  });

  it('refuses other characters, misplaced or extra padding, and impossible lengths', () => {
    for (const text of ['AAAA AAAA', 'AA=A', 'AAAA===', 'A', 'AAAAA', 'AAé=', 'AAAA\n', '.AAA']) {
      expect(fromBase64(text), text).toBeNull();
    }
    expect(fromBase64('')).toEqual(new Uint8Array(0));
    expect(fromBase64(undefined as never)).toBeNull();
  });
});

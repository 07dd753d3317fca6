import { describe, expect, it } from 'vitest';
import { eventBytes } from './event-bytes.js';

describe('eventBytes', () => {
  it('writes the UTF-8 bytes Buffer.from writes, lone surrogates as U+FFFD alike', () => {
    for (const text of ['', '{"a":1}', 'café — ✓', 'emoji 😀 pair', 'lone \ud800 high', 'lone \udfff low']) {
      const bytes = eventBytes(text);
      expect(Buffer.isBuffer(bytes)).toBe(true);
      expect(bytes.equals(Buffer.from(text))).toBe(true);
    }
  });

  it('keeps every body whole while later ones fill and replace the slabs', () => {
    // Sizes from a few bytes to past the slab's own-allocation bound, three-byte characters among
    // them, so that bodies end at every offset and slabs run out mid-way through many.
    const texts = Array.from(
      { length: 3_000 },
      (_, i) => `{"n":${i},"s":"${'é✓a'.repeat((i * 37) % 1_500)}"}`,
    );
    const bodies = texts.map(eventBytes);
    texts.forEach((text, i) => {
      expect(bodies[i]?.toString('utf8')).toBe(text);
    });
  });
});

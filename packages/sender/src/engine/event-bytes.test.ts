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
    // Sizes from a few bytes to past the slab's own-allocation bound, mixed and all three-byte
    // characters among them, so that bodies end at every offset and slabs run out mid-way
    // through many: a room check of fewer than three bytes a character cuts one short.
    const texts = Array.from({ length: 3_000 }, (_, i) =>
      i % 2 === 0 ? `{"n":${i},"s":"${'é✓a'.repeat((i * 37) % 1_500)}"}` : '✓'.repeat((i * 53) % 4_000),
    );
    const bodies = texts.map(eventBytes);
    texts.forEach((text, i) => {
      expect(bodies[i]?.toString('utf8')).toBe(text);
    });
  });

  it('puts small bodies one after another into a shared 64 KiB slab, and a longer text than 4,096 characters apart', () => {
    const [first, second, third] = ['{"a":1}', '{"b":2}', '{"c":3}'].map(eventBytes) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    // The first may have opened a new slab or been the last to fit in one: one pair shares.
    const [a, b] = first.buffer === second.buffer ? [first, second] : [second, third];
    expect(b.buffer).toBe(a.buffer);
    expect(a.buffer.byteLength).toBe(64 * 1024);
    expect(b.byteOffset).toBe(a.byteOffset + a.byteLength);
    // At the bound, still a slab's; one character past it, a buffer of its own.
    expect(eventBytes('x'.repeat(4_096)).buffer.byteLength).toBe(64 * 1024);
    const long = eventBytes('x'.repeat(4_097));
    expect(long.buffer.byteLength).toBe(4_097);
    expect(long.toString()).toBe('x'.repeat(4_097));
  });
});

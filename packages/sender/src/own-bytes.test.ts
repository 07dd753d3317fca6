import { expect, it } from 'vitest';
import { ownBytes } from './own-bytes.js';

it('keeps a view that fills its buffer, and copies a slice of a larger one into a buffer of its own', () => {
  const whole = new Uint8Array([1, 2, 3]);
  expect(ownBytes(whole)).toBe(whole);
  const pooled = Buffer.from('{"a":1}'); // a slice of Node's shared pool
  expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength);
  const own = ownBytes(pooled);
  expect(own.buffer).not.toBe(pooled.buffer);
  expect(own.byteLength).toBe(own.buffer.byteLength);
  expect(Buffer.from(own).toString()).toBe('{"a":1}');
});

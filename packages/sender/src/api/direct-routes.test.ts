import { afterEach, describe, expect, it, vi } from 'vitest';
import { WHOLE_BODY_MAX_BYTES } from './array-member-body.js';
import { readJson } from './direct-routes.js';
import { ingestBatchRoute, MAX_BATCH } from './routes/ingest.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const batch = (items: number, bytesEach: number) =>
  Buffer.from(
    JSON.stringify({ events: Array.from({ length: items }, (_, n) => ({ n, pad: 'x'.repeat(bytesEach) })) }),
  );

describe('readJson (design D63)', () => {
  it('parses a large batch an item at a time, and a small one, or one of too many items, whole', () => {
    const large = batch(150, 1_000);
    expect(large.length).toBeGreaterThan(WHOLE_BODY_MAX_BYTES);
    const expected = JSON.parse(large.toString());
    const parse = vi.spyOn(JSON, 'parse');
    expect(readJson(ingestBatchRoute, large)).toEqual(expected);
    expect(parse).toHaveBeenCalledTimes(150);

    parse.mockClear();
    const small = batch(100, 1_000);
    expect(small.length).toBeLessThanOrEqual(WHOLE_BODY_MAX_BYTES);
    readJson(ingestBatchRoute, small);
    expect(parse).toHaveBeenCalledTimes(1);

    parse.mockClear();
    const many = batch(MAX_BATCH + 1, 150);
    expect(many.length).toBeGreaterThan(WHOLE_BODY_MAX_BYTES);
    expect(readJson(ingestBatchRoute, many)).toEqual({ events: expect.any(Array) });
    expect(parse).toHaveBeenCalledTimes(1);
  });
});

import { expect, it } from 'vitest';
import { newLeaseToken } from './lease.js';

it('makes lease tokens of 24 hex digits, none twice', () => {
  const tokens = Array.from({ length: 5000 }, () => newLeaseToken());
  for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{24}$/);
  expect(new Set(tokens).size).toBe(tokens.length);
  // Random bytes: each hex digit about as often as any other (60,000 digits, 3,750 each expected).
  const counts = new Map<string, number>();
  for (const t of tokens) for (const d of t) counts.set(d, (counts.get(d) ?? 0) + 1);
  expect(counts.size).toBe(16);
  for (const n of counts.values()) expect(n).toBeGreaterThan(3000);
});

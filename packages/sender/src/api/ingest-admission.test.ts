import { describe, expect, it } from 'vitest';
import { isSenderError } from '../errors.js';
import { createIngestAdmission, defaultIngestBytesInFlight } from './ingest-admission.js';

const refusal = (take: () => unknown) => {
  try {
    take();
  } catch (error) {
    return isSenderError(error) ? [error.code, error.status, error.retryAfterSeconds] : error;
  }
  return 'taken';
};

describe('createIngestAdmission', () => {
  it('takes requests up to the budget, refuses the next, and takes it again once one is released', () => {
    const admission = createIngestAdmission(1_000);
    const first = admission.take(600);
    admission.take(400); // exactly the budget
    expect(refusal(() => admission.take(1))).toEqual(['overloaded', 503, 1]);
    first();
    first(); // a second release gives nothing back twice
    expect(refusal(() => admission.take(600))).toBe('taken');
    expect(refusal(() => admission.take(1))).toEqual(['overloaded', 503, 1]);
  });

  it('takes a request alone whatever its size', () => {
    const admission = createIngestAdmission(1_000);
    const large = admission.take(5_000);
    expect(refusal(() => admission.take(1))).toEqual(['overloaded', 503, 1]);
    large();
    expect(refusal(() => admission.take(1))).toBe('taken');
  });

  it('defaults to 256 MiB, or a sixteenth of the heap where that is less', () => {
    const MiB = 1024 * 1024;
    expect(defaultIngestBytesInFlight(8192 * MiB)).toBe(256 * MiB);
    expect(defaultIngestBytesInFlight(1024 * MiB)).toBe(64 * MiB);
  });
});

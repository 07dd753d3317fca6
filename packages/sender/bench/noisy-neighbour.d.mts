import type { TestCertificates } from '../test/helpers/test-ca.mjs';

export function noisyNeighbour(options: {
  db: string;
  certs: TestCertificates;
  workers?: number;
  aEndpoints?: number;
  aEvents?: number;
  bEvents?: number;
}): Promise<{ without: number[]; with: number[]; aOpenPeak: number }>;

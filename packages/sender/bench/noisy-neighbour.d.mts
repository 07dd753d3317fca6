import type { TestCertificates } from '../test/helpers/test-ca.mjs';

export function noisyNeighbour(options: {
  db: string;
  certs: TestCertificates;
  workers?: number;
  aEndpoints?: number;
  aEvents?: number;
  bEvents?: number;
  aAccounts?: number;
  aOwnOrigins?: boolean;
  env?: Record<string, string>;
  untilInFlight?: number;
}): Promise<{ without: number[]; with: number[]; aOpenPeak: number }>;

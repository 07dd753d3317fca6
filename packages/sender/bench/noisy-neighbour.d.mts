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
  aAnswers?: boolean;
  /** B's endpoint on A's stalled server, which answers B's route at once. */
  bAtStalled?: boolean;
  env?: Record<string, string>;
  untilInFlight?: number;
}): Promise<{
  without: number[];
  with: number[];
  aOpenPeak: number;
  /** A's deliveries received when each of B's clicks measured with A arrived (`aAnswers`). */
  aArrivedAtB: number[];
  /** A's deliveries in all, the failing endpoint's left out. */
  aDeliveries: number;
}>;

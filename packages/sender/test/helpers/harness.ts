/** Builds engines on a fresh store for the end-to-end tests. */
import { ManualClock } from '../../src/clock.js';
import { createSender, type SenderOptions } from '../../src/engine/sender.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { SenderStore } from '../../src/store/port.js';
import type { TestCertificates } from './test-ca.mjs';

export const ACCOUNT = 'acct_test';

export function makeSender(
  certs: TestCertificates,
  options: Partial<SenderOptions> & { store?: SenderStore } = {},
) {
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
  const sender = createSender({
    store: options.store ?? createMemoryStore(),
    clock,
    ca: certs.ca,
    // Loopback receivers need the development switch; the network-safety tests leave it off.
    allowPrivateNetworks: true,
    attemptTimeoutMs: 2_000,
    ...options,
  });
  return { sender, clock: clock as ManualClock };
}

/** Types of test-ca.mjs. */

/** PEM text: the CA the sender trusts, and the server's key and certificate signed by it. */
export interface TestCertificates {
  ca: string;
  key: string;
  cert: string;
}

/** Makes a fresh CA and a server certificate for localhost and 127.0.0.1 signed by it. */
export function createTestCertificates(): TestCertificates;

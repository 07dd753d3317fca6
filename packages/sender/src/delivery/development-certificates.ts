/**
 * A certificate authority and a certificate for localhost signed by it, for a receiver on a
 * developer's machine: delivery is HTTPS only, and the sender trusts the CA through its `ca`
 * option (`--ca-file`). Nothing is added to any trust store.
 */

export interface DevelopmentCertificates {
  /** PEM of the CA to trust. */
  ca: string;
  /** PEM of the localhost certificate's private key. */
  key: string;
  /** PEM of the localhost certificate (localhost, 127.0.0.1 and ::1). */
  cert: string;
}

/**
 * @example
 * const { ca, key, cert } = await createDevelopmentCertificates({ validDays: 7 });
 * https.createServer({ key, cert }, app);
 * createSender({ store, ca, allowPrivateNetworks: true });
 */
export async function createDevelopmentCertificates({
  validDays = 30,
} = {}): Promise<DevelopmentCertificates> {
  // Loaded here only: the service itself never needs it.
  const { generate } = await import('selfsigned');
  const notAfterDate = new Date(Date.now() + validDays * 24 * 60 * 60 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'linkhooks local development CA' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { ca: ca.cert, key: server.private, cert: server.cert };
}

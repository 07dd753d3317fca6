/**
 * A certificate authority and a localhost certificate made at start, so the sample receiver speaks
 * HTTPS (linkhooks delivers over HTTPS only, design R2) and the sender trusts it through its `ca`
 * option — the way NODE_EXTRA_CA_CERTS would in a deployment. Nothing is downloaded or installed.
 */
import { generate } from 'selfsigned';

export interface Certificates {
  /** PEM of the CA the sender trusts. */
  ca: string;
  key: string;
  cert: string;
}

export async function createCertificates(): Promise<Certificates> {
  const notAfterDate = new Date(Date.now() + 7 * 24 * 60 * 60 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'linkhooks reference CA' }], {
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
        ],
      },
    ],
  });
  return { ca: ca.cert, key: server.private, cert: server.cert };
}

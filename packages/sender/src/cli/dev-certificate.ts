/**
 * `linkhooks-sender dev-certificate`: a certificate authority and a certificate for localhost, so
 * a receiver on a laptop can speak HTTPS (delivery is HTTPS only) and `serve --ca-file` trusts it.
 * Nothing is installed in the system's trust store, and no file is overwritten without --force.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './options.js';

const VALID_DAYS = 30;

export const DEV_CERTIFICATE_FILES = {
  ca: 'ca.pem',
  cert: 'localhost.pem',
  key: 'localhost-key.pem',
} as const;

export async function writeDevCertificate(dir: string, force: boolean): Promise<void> {
  const paths = {
    ca: join(dir, DEV_CERTIFICATE_FILES.ca),
    cert: join(dir, DEV_CERTIFICATE_FILES.cert),
    key: join(dir, DEV_CERTIFICATE_FILES.key),
  };
  const existing = Object.values(paths).filter((path) => existsSync(path));
  if (existing.length > 0 && !force) {
    throw new UsageError(
      `dev-certificate: ${existing.join(', ')} already exists; pass --force to replace it, or --dir for another folder`,
    );
  }
  // Loaded here only: the service itself never needs it.
  const { generate } = await import('selfsigned');
  const notAfterDate = new Date(Date.now() + VALID_DAYS * 24 * 60 * 60 * 1000);
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
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(paths.ca, ca.cert);
  writeFileSync(paths.cert, server.cert);
  writeFileSync(paths.key, server.private, { mode: 0o600 });
  process.stdout.write(
    `Wrote a development certificate authority and a certificate for localhost (valid ${VALID_DAYS} days):\n` +
      `  ${paths.cert} and ${paths.key}: serve your local receiver's HTTPS with these\n` +
      `  ${paths.ca}: start the service with --ca-file ${paths.ca} so it trusts them\n` +
      'For development only: the CA signs nothing else, and nothing was added to your system.\n',
  );
}

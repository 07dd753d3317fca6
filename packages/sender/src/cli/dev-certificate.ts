/**
 * `linkhooks-sender dev-certificate`: a certificate authority and a certificate for localhost, so
 * a receiver on a laptop can speak HTTPS (delivery is HTTPS only) and `serve --ca-file` trusts it.
 * Nothing is installed in the system's trust store, and no file is overwritten without --force.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDevelopmentCertificates } from '../delivery/development-certificates.js';
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
  const certificates = await createDevelopmentCertificates({ validDays: VALID_DAYS });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(paths.ca, certificates.ca);
  writeFileSync(paths.cert, certificates.cert);
  writeFileSync(paths.key, certificates.key, { mode: 0o600 });
  chmodSync(paths.key, 0o600); // a key replaced with --force keeps its file's mode otherwise
  process.stdout.write(
    `Wrote a development certificate authority and a certificate for localhost (valid ${VALID_DAYS} days):\n` +
      `  ${paths.cert} and ${paths.key}: serve your local receiver's HTTPS with these\n` +
      `  ${paths.ca}: start the service with --ca-file ${paths.ca} so it trusts them\n` +
      'For development only: the CA signs nothing else, and nothing was added to your system.\n',
  );
}

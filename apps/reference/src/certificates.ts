/**
 * A certificate authority and a localhost certificate made at start, so the sample receiver speaks
 * HTTPS (linkhooks delivers over HTTPS only, design R2) and the sender trusts it through its `ca`
 * option — the way `linkhooks-sender dev-certificate` and `--ca-file` do. Nothing is downloaded
 * or installed.
 */
import { createDevelopmentCertificates, type DevelopmentCertificates } from '@linkhooks/sender';

export type Certificates = DevelopmentCertificates;

export function createCertificates(): Promise<Certificates> {
  return createDevelopmentCertificates({ validDays: 7 });
}

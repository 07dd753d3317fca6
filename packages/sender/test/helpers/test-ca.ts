/**
 * A throwaway certificate authority and a server certificate for localhost / 127.0.0.1 signed by
 * it, made with openssl at test time. The sender trusts the CA through its `ca` option, exactly as
 * NODE_EXTRA_CA_CERTS would make it trust one in a deployment.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  ca: string;
  key: string;
  cert: string;
}

export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-ca-'));
  const p = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  try {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      p('ca.key'),
      '-out',
      p('ca.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=linkhooks test CA',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      p('server.key'),
      '-out',
      p('server.csr'),
      '-subj',
      '/CN=localhost',
    );
    writeFileSync(p('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
    openssl(
      'x509',
      '-req',
      '-in',
      p('server.csr'),
      '-CA',
      p('ca.pem'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p('server.pem'),
      '-days',
      '2',
      '-extfile',
      p('ext.cnf'),
    );
    return {
      ca: readFileSync(p('ca.pem'), 'utf8'),
      key: readFileSync(p('server.key'), 'utf8'),
      cert: readFileSync(p('server.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

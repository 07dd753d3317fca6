/**
 * A throwaway certificate authority and a server certificate for localhost / 127.0.0.1 signed by
 * it, made with openssl at test time. The sender trusts the CA through its `ca` option, exactly as
 * NODE_EXTRA_CA_CERTS would make it trust one in a deployment.
 *
 * Plain JavaScript (types in test-ca.d.mts) so that the benchmark, which node runs without
 * TypeScript, makes its certificates with this same code.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Makes a fresh CA and a server certificate signed by it, valid for two days.
 *
 * @example
 * const certs = createTestCertificates();
 * https.createServer({ key: certs.key, cert: certs.cert }, app); // the sender gets `ca: certs.ca`
 */
export function createTestCertificates() {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-ca-'));
  const p = (name) => join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });
  const newKey = (keyFile, out, subject) => [
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    out,
    '-subj',
    subject,
  ];
  try {
    openssl('req', '-x509', ...newKey(p('ca.key'), p('ca.pem'), '/CN=linkhooks test CA'), '-days', '2');
    openssl('req', ...newKey(p('server.key'), p('server.csr'), '/CN=localhost'));
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

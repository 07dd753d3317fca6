// Verifying a delivery with nothing but node:crypto.
// Usage: node verify-node.mjs <body file> <secret> <X-Service-Signature value>
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export function verify(rawBody, secret, signature) {
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  // The header is 64 hex digits; anything else (a "sha256=" prefix too) is not a linkhooks signature.
  if (typeof signature !== 'string' || !/^[0-9a-fA-F]{64}$/.test(signature)) return false;
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.length !== 5) {
    console.error('usage: node verify-node.mjs <body file> <secret> <X-Service-Signature value>');
    process.exit(2);
  }
  const [file, secret, signature] = process.argv.slice(2);
  const valid = verify(readFileSync(file), secret, signature);
  console.log(valid ? 'valid' : 'invalid');
  process.exitCode = valid ? 0 : 1;
}

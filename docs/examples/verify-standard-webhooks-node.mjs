// Verifying a delivery in the Standard Webhooks form with nothing but node:crypto.
// Usage: node verify-standard-webhooks-node.mjs <body file> <secret> <webhook-id> <webhook-timestamp>
//                                               <webhook-signature> [now, Unix seconds]
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const TOLERANCE = 300; // seconds either way, as the SDK's default

export function verify(rawBody, secret, id, timestamp, signature, now = Date.now() / 1000) {
  // All three headers are required: never fall back to X-Service-Signature.
  if (!id || !timestamp || !signature) return false;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > TOLERANCE) return false;
  const encoded = secret.replace(/^whsec_/, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return false; // an earlier base64url secret: rotate it
  const key = Buffer.from(encoded, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  // One "v1,<base64>" entry per valid secret, space-separated, during a rotation.
  return signature.split(' ').some((entry) => {
    if (!entry.startsWith('v1,')) return false;
    const given = Buffer.from(entry.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.length < 7 || process.argv.length > 8) {
    console.error(
      'usage: node verify-standard-webhooks-node.mjs <body file> <secret> <webhook-id> <webhook-timestamp> <webhook-signature> [now]',
    );
    process.exit(2);
  }
  const [file, secret, id, timestamp, signature, now] = process.argv.slice(2);
  const at = now === undefined ? undefined : Number(now);
  const valid = verify(readFileSync(file), secret, id, timestamp, signature, at);
  console.log(valid ? 'valid' : 'invalid');
  process.exitCode = valid ? 0 : 1;
}

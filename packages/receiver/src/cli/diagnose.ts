/**
 * Why a signature does not match, found by trying the usual mistakes rather than guessing: a
 * `sha256=` prefix, whitespace around the secret, a body that was re-formatted or gained a final
 * newline. Pure: bytes and strings in, a verdict out (used by `linkhooks verify`).
 */
import { verifySignature } from '@linkhooks/protocol';

export type Diagnosis =
  | { valid: true; message: string }
  | {
      valid: false;
      cause:
        | 'prefix'
        | 'secret_whitespace'
        | 'reformatted_body'
        | 'trailing_newline'
        | 'malformed'
        | 'wrong_secret';
      message: string;
    };

const matches = (body: Uint8Array | string, signature: string, secret: string) =>
  verifySignature(body, signature, secret).valid;

export function diagnose(body: Uint8Array, signature: string, secret: string): Diagnosis {
  const given = signature.trim();
  if (matches(body, given, secret))
    return { valid: true, message: 'valid: the signature matches this body and secret' };

  const bare = given.replace(/^sha256=/i, '');
  if (bare !== given) {
    return matches(body, bare, secret)
      ? {
          valid: false,
          cause: 'prefix',
          message:
            'invalid as sent: it has a "sha256=" prefix. linkhooks signatures are bare hex; without the prefix it matches, so whatever added it is not linkhooks.',
        }
      : {
          valid: false,
          cause: 'prefix',
          message:
            'invalid: a "sha256=" prefix is never part of a linkhooks signature, and the hex after it does not match either.',
        };
  }
  if (!/^[0-9a-fA-F]{64}$/.test(bare)) {
    return {
      valid: false,
      cause: 'malformed',
      message: `invalid: a signature is 64 hex digits; this is ${bare.length} characters${/[^0-9a-fA-F]/.test(bare) ? ' with non-hex ones' : ''}.`,
    };
  }
  if (secret.trim() !== secret && matches(body, bare, secret.trim())) {
    return {
      valid: false,
      cause: 'secret_whitespace',
      message:
        'invalid: the secret has whitespace around it (a copied newline?). Without it, the signature matches.',
    };
  }
  const text = new TextDecoder().decode(body);
  if (/\r?\n$/.test(text) && matches(text.replace(/\r?\n$/, ''), bare, secret)) {
    return {
      valid: false,
      cause: 'trailing_newline',
      message:
        'invalid: the body ends with a newline that was not sent (an editor or echo adds one). Without it, the signature matches.',
    };
  }
  try {
    const compact = JSON.stringify(JSON.parse(text));
    if (compact !== text && matches(compact, bare, secret)) {
      return {
        valid: false,
        cause: 'reformatted_body',
        message:
          'invalid: this body was re-formatted (parsed and serialised again). The signature matches the compact original: verify the raw bytes as received.',
      };
    }
  } catch {
    // not JSON: nothing to re-format
  }
  return {
    valid: false,
    cause: 'wrong_secret',
    message:
      "invalid: no usual mistake explains it. Most likely the secret is another endpoint's (each has its own; after a rotation the old one no longer signs), or the body is not the bytes that were sent.",
  };
}

/**
 * Where `trigger` and `verify` find the endpoint secret: `--secret`, then `--secret-file`, then
 * `LINKHOOKS_SECRET`. A secret on the command line shows in `ps` to every user of the machine; the
 * file and the environment keep it out of sight.
 */
import { readFileSync } from 'node:fs';

export class SecretError extends Error {
  override readonly name = 'SecretError';
}

export interface SecretSources {
  secret?: string | undefined;
  secretFile?: string | undefined;
  env: Record<string, string | undefined>;
}

function readSecretFile(path: string): string {
  // Standard input is `verify`'s body when no --file is given, so it cannot carry the secret too.
  if (path === '-') {
    throw new SecretError(
      '--secret-file needs a path: standard input is kept for the body. Use a file or LINKHOOKS_SECRET',
    );
  }
  if (path === '') throw new SecretError('--secret-file needs a path');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a folder'
            : (code ?? 'unreadable');
    throw new SecretError(`--secret-file: cannot read ${path} (${why})`);
  }
  // Editors and `echo` end a file with a newline that is not part of the secret.
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '') throw new SecretError(`--secret-file: ${path} is empty`);
  return secret;
}

/**
 * The secret to sign or verify with, or a `SecretError` that says what to pass.
 *
 * @example
 * resolveSecret({ secretFile: '.linkhooks-secret', env: process.env });
 */
export function resolveSecret(sources: SecretSources): string {
  if (sources.secret !== undefined && sources.secretFile !== undefined) {
    throw new SecretError('give --secret or --secret-file, not both');
  }
  if (sources.secret !== undefined) {
    if (sources.secret === '') throw new SecretError('--secret is empty');
    return sources.secret;
  }
  if (sources.secretFile !== undefined) return readSecretFile(sources.secretFile);
  const fromEnv = sources.env.LINKHOOKS_SECRET;
  if (fromEnv) return fromEnv;
  throw new SecretError('a secret is required: --secret-file <file>, LINKHOOKS_SECRET or --secret');
}

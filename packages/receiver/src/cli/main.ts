#!/usr/bin/env node
/**
 * @module
 * `linkhooks`: the customer's command line for a receiver under development.
 *   linkhooks trigger <event> --url <u> [--secret-file <f>] [--data JSON]
 *   linkhooks verify [--secret-file <f>] --signature <hex> [--file body | stdin]
 * The secret comes from --secret, --secret-file or LINKHOOKS_SECRET (read-secret.ts).
 * Exit codes: 0 delivered / valid, 1 refused / invalid, 2 a usage error.
 */
import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { EVENT_NAMES } from '@linkhooks/protocol';
import { diagnose } from './diagnose.js';
import { resolveSecret, SecretError } from './read-secret.js';
import { TriggerError, trigger } from './trigger.js';

const USAGE = `linkhooks — try and debug a linkhooks webhook receiver

Usage:
  linkhooks trigger <event> --url <url> [--secret-file <file>] [--data '{"country":"FR"}']
      sends one signed, schema-valid sample delivery, exactly as the service would, and reports the answer
  linkhooks verify [--secret-file <file>] --signature <hex> [--file <body file>]
      says whether a signature matches a body (from --file, or standard input) and, if not, why

The endpoint secret (whsec_…), for both commands:
  --secret-file <file>   read it from a file (one final newline is ignored)
  LINKHOOKS_SECRET       or from the environment, when neither flag is given
  --secret <whsec_…>     or on the command line: other users of this machine can see it (in ps);
                         prefer --secret-file or LINKHOOKS_SECRET for a real endpoint's secret
  Give --secret or --secret-file, not both.

Events: ${EVENT_NAMES.join(', ')}
Trust a local receiver's CA with NODE_EXTRA_CA_CERTS.
`;

class UsageError extends Error {}

function args(argv: string[], options: NonNullable<ParseArgsConfig['options']>) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function secretOf(values: Record<string, unknown>): string {
  try {
    return resolveSecret({
      secret: values.secret as string | undefined,
      secretFile: values['secret-file'] as string | undefined,
      env: process.env,
    });
  } catch (error) {
    if (error instanceof SecretError) throw new UsageError(error.message);
    throw error;
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function runTrigger(argv: string[]): Promise<number> {
  const { values, positionals } = args(argv, {
    url: { type: 'string' },
    secret: { type: 'string' },
    'secret-file': { type: 'string' },
    data: { type: 'string' },
    timeout: { type: 'string' },
  });
  const [event] = positionals;
  if (!event || positionals.length > 1) throw new UsageError('trigger takes one event name');
  if (typeof values.url !== 'string') throw new UsageError('--url is required');
  let data: Record<string, unknown> | undefined;
  if (typeof values.data === 'string') {
    try {
      data = JSON.parse(values.data);
    } catch {
      throw new UsageError('--data must be a JSON object');
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new UsageError('--data must be a JSON object');
    }
  }
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout) * 1000;
  if (timeoutMs !== undefined && !(timeoutMs > 0)) throw new UsageError('--timeout is a number of seconds');
  let result: Awaited<ReturnType<typeof trigger>>;
  try {
    result = await trigger({
      event,
      url: values.url,
      secret: secretOf(values),
      ...(data ? { data } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  } catch (error) {
    if (error instanceof TriggerError) throw new UsageError(error.message);
    throw error;
  }
  process.stdout.write(
    `→ POST ${values.url}  ${event} (${Buffer.byteLength(result.sent)} bytes, event ${result.eventId})\n`,
  );
  if (result.status === null) {
    process.stdout.write(`✗ no answer after ${result.ms} ms: ${result.error}\n`);
    return 1;
  }
  process.stdout.write(
    `${result.ok ? '✓' : '✗'} ${result.status} in ${result.ms} ms${result.body ? `: ${result.body}` : ''}\n`,
  );
  if (!result.ok) {
    const why =
      result.status === 401
        ? 'the receiver refused the signature: is it configured with this secret? Its onError hook (or exposeHints: true) says why'
        : result.status >= 300 && result.status < 400
          ? 'a redirect: linkhooks never follows redirects; give the final URL'
          : 'any non-2xx answer makes linkhooks retry (1 m, 5 m, 30 m, 2 h, 8 h)';
    process.stdout.write(`  ${why}\n`);
  }
  return result.ok ? 0 : 1;
}

async function runVerify(argv: string[]): Promise<number> {
  const { values, positionals } = args(argv, {
    secret: { type: 'string' },
    'secret-file': { type: 'string' },
    signature: { type: 'string' },
    file: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`verify takes no arguments (got ${positionals.join(' ')})`);
  if (typeof values.signature !== 'string') throw new UsageError('--signature is required');
  const secret = secretOf(values);
  let body: Buffer;
  try {
    body = typeof values.file === 'string' ? readFileSync(values.file) : await readStdin();
  } catch (error) {
    throw new UsageError(`cannot read ${values.file}: ${(error as Error).message}`);
  }
  const verdict = diagnose(body, values.signature, secret);
  process.stdout.write(`${verdict.valid ? '✓' : '✗'} ${verdict.message}\n`);
  return verdict.valid ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'trigger') return await runTrigger(rest);
    if (command === 'verify') return await runVerify(rest);
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(USAGE);
      return 0;
    }
    throw new UsageError(`unknown command "${command}"`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`linkhooks: ${error.message}\n\n${USAGE}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`linkhooks: ${String((error as Error)?.stack ?? error)}\n`);
    process.exitCode = 1;
  },
);

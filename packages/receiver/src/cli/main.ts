#!/usr/bin/env node
/**
 * @module
 * `linkhooks`: the customer's command line for a receiver under development.
 *   linkhooks trigger <event> --url <u> [--secret-file <f>] [--data JSON] [--scheme standard-webhooks] [--test]
 *   linkhooks verify [--secret-file <f>] --signature <hex> [--file body | stdin]
 *   linkhooks verify --scheme standard-webhooks --header 'webhook-id: …' … [--now <s>] [--tolerance <s>]
 * The secret comes from --secret, --secret-file or LINKHOOKS_SECRET (read-secret.ts).
 * Exit codes: 0 delivered / valid, 1 refused / invalid, 2 a usage error.
 */
import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { EVENT_NAMES } from '@linkhooks/protocol';
import type { Scheme } from '../scheme.js';
import { diagnose } from './diagnose.js';
import { diagnoseStandard } from './diagnose-standard.js';
import { resolveSecret, SecretError } from './read-secret.js';
import { TriggerError, trigger } from './trigger.js';

const USAGE = `linkhooks — try and debug a linkhooks webhook receiver

Usage:
  linkhooks trigger <event> --url <url> [--secret-file <file>] [--data '{"country":"FR"}']
                   [--scheme standard-webhooks] [--test]
      sends one signed, schema-valid sample delivery, exactly as the service would, and reports the answer
      --scheme standard-webhooks  adds webhook-id, webhook-timestamp and webhook-signature, as an
                                  endpoint with Standard Webhooks turned on receives them
      --test                      marks it a test delivery (X-Service-Test: 1)
      --timeout <seconds>         how long to wait for the answer (default 30)
  linkhooks verify [--secret-file <file>] --signature <hex> [--file <body file>]
      says whether a signature matches a body (from --file, or standard input) and, if not, why
  linkhooks verify --scheme standard-webhooks [--secret-file <file>] --header 'webhook-id: …'
                   --header 'webhook-timestamp: …' --header 'webhook-signature: …' [--file <body file>]
                   [--now <Unix seconds>] [--tolerance <seconds>]
      the same for the Standard Webhooks form: names a missing header, a stale timestamp and by how
      much, a body-only delivery. --header takes any header as "name: value" (svix-* names too);
      --now judges the timestamp as of another time (when the delivery was received), default now;
      --tolerance defaults to 300

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

/** Asked for the usage (no command, `help`, or `--help`/`-h` anywhere): printed, and nothing run. */
class HelpAsked extends Error {}

/** A command's arguments; `--help` and `-h` are every command's. */
function args(argv: string[], options: NonNullable<ParseArgsConfig['options']>) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.values.help) throw new HelpAsked();
  return parsed;
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

function schemeOf(value: unknown): Scheme | undefined {
  if (value === undefined) return undefined;
  if (value === 'standard-webhooks' || value === 'x-service-signature') return value;
  throw new UsageError('--scheme is standard-webhooks or x-service-signature (the default)');
}

/** `--header 'name: value'`, repeated, as a lowercase-name map. */
function headersOf(values: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of (values as string[] | undefined) ?? []) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header takes "name: value", got "${line}"`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function secondsOf(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(typeof value === 'string' && value.trim() !== '' && Number.isFinite(n) && n >= 0)) {
    throw new UsageError(`${flag} is a number of seconds`);
  }
  return n;
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
    scheme: { type: 'string' },
    test: { type: 'boolean' },
  });
  const scheme = schemeOf(values.scheme);
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
      ...(scheme ? { scheme } : {}),
      ...(values.test ? { test: true } : {}),
    });
  } catch (error) {
    if (error instanceof TriggerError) throw new UsageError(error.message);
    throw error;
  }
  process.stdout.write(
    `→ POST ${values.url}  ${event} (${Buffer.byteLength(result.sent)} bytes, event ${result.eventId}${scheme === 'standard-webhooks' ? ', Standard Webhooks headers' : ''}${values.test ? ', test delivery' : ''})\n`,
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
        ? scheme === 'standard-webhooks'
          ? 'the receiver refused the signature: is it configured with this secret, and is its clock right? Its onError hook (or exposeHints: true) says why'
          : 'the receiver refused the signature: is it configured with this secret? A receiver in the Standard Webhooks scheme refuses deliveries without the webhook-* headers (try --scheme standard-webhooks). Its onError hook (or exposeHints: true) says why'
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
    scheme: { type: 'string' },
    header: { type: 'string', multiple: true },
    now: { type: 'string' },
    tolerance: { type: 'string' },
  });
  if (positionals.length > 0)
    throw new UsageError(`verify takes no arguments (got ${positionals.join(' ')})`);
  const scheme = schemeOf(values.scheme);
  const headers = headersOf(values.header);
  if (typeof values.signature === 'string') headers['x-service-signature'] = values.signature;
  const standard = scheme === 'standard-webhooks';
  const now = secondsOf(values.now, '--now');
  const tolerance = secondsOf(values.tolerance, '--tolerance');
  if (!standard && (now !== undefined || tolerance !== undefined)) {
    throw new UsageError(
      '--now and --tolerance apply to --scheme standard-webhooks: X-Service-Signature signs no time',
    );
  }
  if (!standard && headers['x-service-signature'] === undefined) {
    throw new UsageError('--signature is required');
  }
  const secret = secretOf(values);
  let body: Buffer;
  try {
    body = typeof values.file === 'string' ? readFileSync(values.file) : await readStdin();
  } catch (error) {
    throw new UsageError(`cannot read ${values.file}: ${(error as Error).message}`);
  }
  const verdict = standard
    ? diagnoseStandard(body, headers, secret, {
        now: now === undefined ? Date.now() : now * 1000,
        ...(tolerance === undefined ? {} : { toleranceSeconds: tolerance }),
      })
    : diagnose(body, headers['x-service-signature']!, secret);
  process.stdout.write(`${verdict.valid ? '✓' : '✗'} ${verdict.message}\n`);
  return verdict.valid ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'trigger') return await runTrigger(rest);
    if (command === 'verify') return await runVerify(rest);
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      throw new HelpAsked();
    }
    throw new UsageError(`unknown command "${command}"`);
  } catch (error) {
    if (error instanceof HelpAsked) {
      process.stdout.write(USAGE);
      return 0;
    }
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

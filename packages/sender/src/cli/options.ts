/**
 * Flags and environment of `linkhooks-sender` (design D23), parsed into settings by pure
 * functions (but for reading `--db-file`, db-file.ts): a flag wins over its environment variable;
 * anything unknown or malformed is an error that names the flag and what it takes.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { frameAncestorsOf, publicUrlOf } from '../api/origin-settings.js';
import { DISABLE_THRESHOLD } from '../domain/disable-rule.js';
import {
  type OperatorNotifications,
  type OperatorOption,
  operatorSettings,
} from '../engine/operator-options.js';
import { isSenderError, type SenderError } from '../errors.js';
import { type AccountsCommand, parseAccounts } from './accounts-options.js';
import { DbFileError, readDbFile } from './db-file.js';
import { MASTER_KEY_FLAGS, type MasterKeySettings, masterKeysOf } from './master-key-options.js';
import { postgresUrlProblem } from './postgres-url.js';
import { UsageError } from './usage-error.js';

export const DEFAULT_DB = 'sqlite:./data/linkhooks.db';
export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = '127.0.0.1';

export { UsageError };

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'migrate'; db: string }
  | AccountsCommand
  | {
      kind: 'serve';
      db: string;
      port: number;
      host: string;
      engine: EngineSettings;
      http: HttpSettings;
      keys: MasterKeySettings;
    }
  | {
      kind: 'worker';
      db: string;
      engine: EngineSettings;
      keys: MasterKeySettings;
      /** Where it answers /healthz and /metrics; none unless a port is given. */
      listen?: { port: number; host: string };
    }
  | { kind: 'rotate-master-key'; db: string; keys: MasterKeySettings }
  | { kind: 'dev-certificate'; dir: string; force: boolean };

export interface EngineSettings {
  allowPrivateNetworks: boolean;
  timeScale: number;
  /** A 410 Gone disables its endpoint at once (design D41). */
  disableOnGone: boolean;
  /**
   * A PEM file of certificate authorities trusted beside the system's, for endpoints' HTTPS, with
   * the flag or variable that named it.
   */
  caFile?: { path: string; source: string };
  /** Its contents, read before anything is opened (ca-file.ts). */
  ca?: string;
  /** Signed notices to the platform about endpoints' health (design D50). */
  operatorNotifications?: OperatorNotifications;
}

/** How `serve` answers behind a TLS proxy (design D28), and who may frame its dashboard (design D55). */
export interface HttpSettings {
  trustProxy: boolean;
  hsts: boolean;
  /** Where browsers reach the service, for portal links (design D54); else the address called. */
  publicUrl?: string;
  /** Origins that may frame the dashboard; none by default. */
  frameAncestors: string[];
}

export const DEFAULT_DEV_CERTIFICATE_DIR = '.linkhooks-dev';

type Env = Record<string, string | undefined>;

const DB_FLAG = { db: { type: 'string' }, 'db-file': { type: 'string' } } as const;
const ENGINE_FLAGS = {
  'allow-private-networks': { type: 'boolean' },
  'disable-on-gone': { type: 'boolean' },
  'time-scale': { type: 'string' },
  'ca-file': { type: 'string' },
  'operator-url': { type: 'string' },
  'operator-failing-share': { type: 'string' },
} as const;

/** `--help` or `-h` after a command: the usage is printed instead of running it. */
class HelpAsked extends Error {}

/** A command's flags; `--help` and `-h` are every command's. */
function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>, command: string) {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message}`);
  }
  if (values.help) throw new HelpAsked();
  return values;
}

/** Reads the file named by `--db-file` or `LINKHOOKS_DB_FILE` (db-file.ts); injectable for tests. */
export type DbFileReader = (path: string, source: string) => string;

// A flag wins over the environment. --db with --db-file, or both variables, are refused rather
// than one silently ignored.
function dbOf(values: Record<string, unknown>, env: Env, readFile: DbFileReader): string {
  const flag = values.db as string | undefined;
  const file = values['db-file'] as string | undefined;
  if (flag !== undefined && file !== undefined) throw new UsageError('give --db or --db-file, not both');
  const fromEnv = flag === undefined && file === undefined;
  if (fromEnv && env.LINKHOOKS_DB !== undefined && env.LINKHOOKS_DB_FILE !== undefined) {
    throw new UsageError('set LINKHOOKS_DB or LINKHOOKS_DB_FILE, not both');
  }
  // Where the database's URL comes from: a file named by a flag or a variable, or a URL (the flag's,
  // the variable's, or the default).
  const [source, path] =
    file !== undefined
      ? ['--db-file', file]
      : fromEnv && env.LINKHOOKS_DB === undefined && env.LINKHOOKS_DB_FILE !== undefined
        ? ['LINKHOOKS_DB_FILE', env.LINKHOOKS_DB_FILE]
        : [flag === undefined && env.LINKHOOKS_DB !== undefined ? 'LINKHOOKS_DB' : '--db', undefined];
  let db: string;
  try {
    db = path !== undefined ? readFile(path, source) : (flag ?? env.LINKHOOKS_DB ?? DEFAULT_DB);
  } catch (error) {
    if (error instanceof DbFileError) throw new UsageError(error.message);
    throw error;
  }
  // The message never repeats the URL: it may hold a password.
  if (!/^sqlite:.+/.test(db) && !/^postgres(ql)?:\/\/./.test(db)) {
    const what = path === undefined ? source : `the URL in ${source} ${path}`;
    throw new UsageError(`${what} must be sqlite:<file> or postgres://user@host:port/database`);
  }
  const problem = db.startsWith('postgres') ? postgresUrlProblem(db) : null;
  if (problem !== null)
    throw new UsageError(`${path === undefined ? source : `the URL in ${source} ${path}`} ${problem}`);
  return db;
}

function booleanEnv(name: string, env: Env): boolean {
  const value = env[name];
  if (value === undefined || value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new UsageError(`${name} must be 1, true, 0 or false`);
}

function engineOf(values: Record<string, unknown>, env: Env): EngineSettings {
  const scale = setting(values, env, 'time-scale', 'LINKHOOKS_TIME_SCALE');
  const raw = scale.value ?? '1';
  const timeScale = Number(raw);
  if (!/^\d*\.?\d+(e-?\d+)?$/i.test(raw) || !(timeScale > 0) || timeScale > 1000) {
    throw new UsageError(
      `${scale.source} must be a number above 0 and at most 1000 (0.001 runs the schedule in ~38 s)`,
    );
  }
  const ca = setting(values, env, 'ca-file', 'LINKHOOKS_CA_FILE');
  if (ca.value === '') throw new UsageError(`${ca.source} needs the path of a PEM file`);
  return {
    allowPrivateNetworks:
      (values['allow-private-networks'] as boolean | undefined) ??
      booleanEnv('LINKHOOKS_ALLOW_PRIVATE_NETWORKS', env),
    timeScale,
    disableOnGone:
      (values['disable-on-gone'] as boolean | undefined) ?? booleanEnv('LINKHOOKS_DISABLE_ON_GONE', env),
    ...(ca.value ? { caFile: { path: ca.value, source: ca.source } } : {}),
    ...operatorOf(values, env),
  };
}

/**
 * The operator URL by flag or variable, its secret by variable only (a flag shows in ps), checked
 * by the engine's own rules so the CLI refuses what the engine would.
 */
function operatorOf(
  values: Record<string, unknown>,
  env: Env,
): Pick<EngineSettings, 'operatorNotifications'> {
  const url = setting(values, env, 'operator-url', 'LINKHOOKS_OPERATOR_URL');
  const share = setting(values, env, 'operator-failing-share', 'LINKHOOKS_OPERATOR_FAILING_SHARE');
  if (url.value === undefined || url.value === '') {
    if (share.value !== undefined) {
      throw new UsageError(`${share.source} needs --operator-url (or LINKHOOKS_OPERATOR_URL)`);
    }
    return {};
  }
  const secret = env.LINKHOOKS_OPERATOR_SECRET;
  if (!secret)
    throw new UsageError(`${url.source} needs LINKHOOKS_OPERATOR_SECRET, the key notices are signed with`);
  const failingShare =
    share.value === undefined
      ? undefined
      : /^\d*\.?\d+$/.test(share.value)
        ? Number(share.value)
        : Number.NaN;
  const operatorNotifications = {
    url: url.value,
    secret,
    ...(failingShare === undefined ? {} : { failingShare }),
  };
  // The engine's own check; its refusal names the setting (details.option).
  const source: Record<OperatorOption, string> = {
    url: url.source,
    secret: 'LINKHOOKS_OPERATOR_SECRET',
    failingShare: share.source,
  };
  checkedAs(
    () => operatorSettings(operatorNotifications, DISABLE_THRESHOLD),
    // Every refusal of operatorSettings names its option (refused()).
    (error) => source[(error.details as { option: OperatorOption }).option],
  );
  return { operatorNotifications };
}

/** A flag's value, else its variable's, with the name of the one it came from. */
function setting(
  values: Record<string, unknown>,
  env: Env,
  flag: string,
  variable: string,
): { value: string | undefined; source: string } {
  const fromFlag = values[flag] as string | undefined;
  return fromFlag !== undefined
    ? { value: fromFlag, source: `--${flag}` }
    : { value: env[variable], source: variable };
}

/** A setting's check (a SenderError), its message naming where the refused setting came from. */
function checkedAs<T>(check: () => T, source: string | ((error: SenderError) => string)): T {
  try {
    return check();
  } catch (error) {
    if (!isSenderError(error)) throw error;
    throw new UsageError(`${typeof source === 'string' ? source : source(error)}: ${error.message}`);
  }
}

function httpOf(values: Record<string, unknown>, env: Env): HttpSettings {
  const publicUrl = setting(values, env, 'public-url', 'LINKHOOKS_PUBLIC_URL');
  const frames = setting(values, env, 'frame-ancestors', 'LINKHOOKS_FRAME_ANCESTORS');
  return {
    trustProxy: (values['trust-proxy'] as boolean | undefined) ?? booleanEnv('LINKHOOKS_TRUST_PROXY', env),
    hsts: (values.hsts as boolean | undefined) ?? booleanEnv('LINKHOOKS_HSTS', env),
    ...(publicUrl.value
      ? { publicUrl: checkedAs(() => publicUrlOf(publicUrl.value as string), publicUrl.source) }
      : {}),
    frameAncestors: checkedAs(() => frameAncestorsOf(frames.value), frames.source),
  };
}

function portOf(values: Record<string, unknown>, env: Env, variable = 'LINKHOOKS_PORT'): number | undefined {
  const { value: raw, source } = setting(values, env, 'port', variable);
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || port > 65535)
    throw new UsageError(`${source} must be a whole number from 0 to 65535`);
  return port;
}

/** The flags of a process that delivers, `serve` or `worker`. */
const PROCESS_FLAGS = {
  ...DB_FLAG,
  ...ENGINE_FLAGS,
  ...MASTER_KEY_FLAGS,
  port: { type: 'string' },
  host: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** `argv` without `node` and the script. */
export function parseCommand(argv: string[], env: Env, readFile: DbFileReader = readDbFile): Command {
  try {
    return parseFlags(argv, env, readFile);
  } catch (error) {
    if (error instanceof HelpAsked) return { kind: 'help' };
    throw error;
  }
}

/** What asks for the usage where a command (or `accounts`' subcommand) would be. */
const isHelpFlag = (arg: string | undefined) => arg === '--help' || arg === '-h';

function parseFlags(argv: string[], env: Env, readFile: DbFileReader): Command {
  const [first, second, ...rest] = argv;
  if (first === undefined || first === 'help' || isHelpFlag(first)) return { kind: 'help' };
  if (first === 'accounts' && isHelpFlag(second)) return { kind: 'help' };
  if (first === '--version' || first === '-v') return { kind: 'version' };
  switch (first) {
    case 'migrate': {
      const values = parse(argv.slice(1), DB_FLAG, 'migrate');
      return { kind: 'migrate', db: dbOf(values, env, readFile) };
    }
    case 'accounts':
      return parseAccounts(
        second,
        rest,
        parse,
        (values) => dbOf(values, env, readFile),
        (message) => new UsageError(message),
        DB_FLAG,
      );
    case 'serve': {
      const values = parse(
        argv.slice(1),
        {
          ...PROCESS_FLAGS,
          'trust-proxy': { type: 'boolean' },
          hsts: { type: 'boolean' },
          'public-url': { type: 'string' },
          'frame-ancestors': { type: 'string' },
        },
        'serve',
      );
      const db = dbOf(values, env, readFile);
      return {
        kind: 'serve',
        db,
        port: portOf(values, env) ?? DEFAULT_PORT,
        host: (values.host as string | undefined) ?? env.LINKHOOKS_HOST ?? DEFAULT_HOST,
        engine: engineOf(values, env),
        http: httpOf(values, env),
        keys: masterKeysOf(values, env, db),
      };
    }
    case 'worker': {
      const values = parse(argv.slice(1), PROCESS_FLAGS, 'worker');
      const db = dbOf(values, env, readFile);
      // Its own variables, not serve's: a worker started with serve's environment must not try its port.
      const port = portOf(values, env, 'LINKHOOKS_WORKER_PORT');
      const { value: host, source } = setting(values, env, 'host', 'LINKHOOKS_WORKER_HOST');
      if (port === undefined && host !== undefined) {
        throw new UsageError(`${source} needs a port: --port or LINKHOOKS_WORKER_PORT`);
      }
      return {
        kind: 'worker',
        db,
        engine: engineOf(values, env),
        keys: masterKeysOf(values, env, db),
        ...(port === undefined ? {} : { listen: { port, host: host ?? DEFAULT_HOST } }),
      };
    }
    case 'rotate-master-key': {
      const values = parse(argv.slice(1), { ...DB_FLAG, ...MASTER_KEY_FLAGS }, 'rotate-master-key');
      const db = dbOf(values, env, readFile);
      return { kind: 'rotate-master-key', db, keys: masterKeysOf(values, env, db) };
    }
    case 'dev-certificate': {
      const values = parse(
        argv.slice(1),
        { dir: { type: 'string' }, force: { type: 'boolean' } },
        'dev-certificate',
      );
      const dir = (values.dir as string | undefined) ?? DEFAULT_DEV_CERTIFICATE_DIR;
      if (dir === '') throw new UsageError('dev-certificate: --dir needs a folder');
      return { kind: 'dev-certificate', dir, force: values.force === true };
    }
    default:
      throw new UsageError(`unknown command "${first}"`);
  }
}

export const USAGE = `linkhooks-sender — the linkhooks webhook service

Usage:
  linkhooks-sender migrate  [--db URL | --db-file F]
  linkhooks-sender accounts create --name NAME --plan free|pro|business|enterprise [--json]
  linkhooks-sender accounts list [--limit N] [--cursor ID] [--json]
  linkhooks-sender accounts keys --id ACCOUNT [--json]
                            the account's API keys: ids, first characters, status, created and last used
  linkhooks-sender accounts rotate-key --id ACCOUNT [--grace SECONDS] [--json]
                            a new key, shown once; the others keep working SECONDS more (default 3600,
                            0 ends them at once, at most 86400)
  linkhooks-sender accounts revoke-key --id ACCOUNT --key KEY_ID [--json]
  linkhooks-sender accounts delete --id ACCOUNT --yes [--json]
                            the account and everything it owns: endpoints, events, deliveries, keys
                  (each of them also takes [--db URL | --db-file F])
  linkhooks-sender serve    [--db URL | --db-file F] [--port P] [--host H] [--trust-proxy] [--hsts]
                            [--public-url URL] [--frame-ancestors ORIGINS]
                            [--allow-private-networks] [--ca-file F] [--time-scale F] [--disable-on-gone]
                            [--operator-url URL] [--operator-failing-share N]
                            [--master-key-file F] [--previous-master-key-file F]
  linkhooks-sender worker   [--db URL | --db-file F] [--port P] [--host H]
                            [--allow-private-networks] [--ca-file F] [--time-scale F]
                            [--disable-on-gone] [--operator-url URL] [--operator-failing-share N]
                            [--master-key-file F] [--previous-master-key-file F]
  linkhooks-sender rotate-master-key [--db URL | --db-file F] [--master-key-file F]
                            [--previous-master-key-file F]
                            encrypt every endpoint secret again under the current master key, then
                            exit; with SQLite and no key given, first generate a new key file
  linkhooks-sender dev-certificate [--dir D] [--force]
                            development only: a certificate authority and a localhost certificate
                            for a local HTTPS receiver, written to D (default ${DEFAULT_DEV_CERTIFICATE_DIR})

Options:
  --db URL                  sqlite:<file> (default ${DEFAULT_DB}) or postgres://user@host:port/db
                            (its tables live in the schema linkhooks; add ?schema=NAME for another).
                            A password in the URL works, but other users of this machine can see it
                            (in ps): leave it out and set PGPASSWORD, or use --db-file
  --db-file F               read the URL, password included, from the file F; make F readable only
                            by its owner (chmod 600 F): a warning says when others can read it
  --port P, --host H        where serve listens (default ${DEFAULT_HOST}:${DEFAULT_PORT}; --port 0 picks a free port);
                            a worker given a port answers GET /healthz and GET /metrics there (host
                            default ${DEFAULT_HOST}), and nothing else; without one it listens nowhere
  --trust-proxy             serve sits behind a TLS proxy: "X-Forwarded-Proto: https" from it means the
                            request came over TLS (the session cookie gets Secure, answers get HSTS) and
                            the client's address is the last one it forwarded; without this flag
                            forwarded headers are ignored
  --hsts                    send Strict-Transport-Security on every answer, TLS seen or not
  --public-url URL          where browsers reach the service (https://hooks.example.com): the base of the
                            portal links POST /internal/v1/portal-sessions hands out; without it, the
                            address the platform's request came to
  --frame-ancestors ORIGINS the origins that may show the dashboard in a frame, separated by spaces or
                            commas (https://app.example.com https://admin.example.com; http only for
                            localhost; no paths, no wildcards). Default: none. With any, the session
                            cookie is SameSite=None; Secure; Partitioned over TLS, so it works in their frame
  --allow-private-networks  development only: deliver to loopback and private addresses (never plain HTTP)
  --ca-file F               also trust the certificate authorities in this PEM file for endpoints' HTTPS
                            (for example ${DEFAULT_DEV_CERTIFICATE_DIR}/ca.pem from dev-certificate)
  --time-scale F            multiply the retry delays (0.001 runs the whole schedule in ~38 s)
  --disable-on-gone         a receiver answering 410 Gone disables its endpoint at once (reason "gone");
                            without it a 410 is one failure like any other
  --operator-url URL        POST signed notices about endpoints to this HTTPS URL of the platform:
                            endpoint.failing, endpoint.disabled, endpoint.enabled (each retried on the
                            deliveries' schedule); signed with LINKHOOKS_OPERATOR_SECRET (32 characters
                            or more; a whsec_ secret also signs the Standard Webhooks headers)
  --operator-failing-share N
                            endpoint.failing is sent when an endpoint's consecutive failures reach this
                            share of the disable threshold, once per streak (default 0.5: 5 of 10)
  --master-key-file F       read the master key (32 bytes, base64 or hex) from the file F. Endpoint
                            secrets are always encrypted at rest: with SQLite and no key given, a key
                            is generated on first start into <database file>.master-key (owner-only);
                            back it up with the database. PostgreSQL needs a key, the same in every
                            process: generate one with  openssl rand -base64 32
  --previous-master-key-file F
                            during a rotation, the old key: secrets under it are still read, and are
                            encrypted again under the current key at start

Environment:
  LINKHOOKS_DB, LINKHOOKS_DB_FILE, LINKHOOKS_PORT, LINKHOOKS_HOST, LINKHOOKS_TRUST_PROXY, LINKHOOKS_HSTS,
  LINKHOOKS_PUBLIC_URL, LINKHOOKS_FRAME_ANCESTORS,
  LINKHOOKS_ALLOW_PRIVATE_NETWORKS, LINKHOOKS_CA_FILE, LINKHOOKS_TIME_SCALE, LINKHOOKS_DISABLE_ON_GONE,
  LINKHOOKS_OPERATOR_URL, LINKHOOKS_OPERATOR_FAILING_SHARE,
  LINKHOOKS_WORKER_PORT, LINKHOOKS_WORKER_HOST (a worker's --port and --host)
                            the same settings; a flag wins over its variable
  LINKHOOKS_OPERATOR_SECRET the key operator notices are signed with (required with --operator-url)
  PGPASSWORD                the PostgreSQL password, when the URL has none
  LINKHOOKS_SERVICE_TOKEN   the token POST /internal/v1/events requires (ingest is off without it)
  LINKHOOKS_METRICS_TOKEN   when set, GET /metrics requires it as a Bearer token (open otherwise)
  LINKHOOKS_MASTER_KEY, LINKHOOKS_MASTER_KEY_FILE
                            the master key (32 bytes, base64 or hex), or a file holding it
  LINKHOOKS_PREVIOUS_MASTER_KEY, LINKHOOKS_PREVIOUS_MASTER_KEY_FILE
                            the old key during a rotation
  LINKHOOKS_RETENTION_DAYS  days final deliveries stay in the log (default 30; pruned hourly)
  LINKHOOKS_LOG_LEVEL       pino level for the JSON logs on stdout (default info)
  LINKHOOKS_ENDPOINTS_PER_ACCOUNT, LINKHOOKS_EVENTS_PER_SECOND, LINKHOOKS_EVENTS_BURST,
  LINKHOOKS_TEST_SENDS_PER_MINUTE, LINKHOOKS_RETRIES_PER_MINUTE, LINKHOOKS_RECOVERIES_PER_MINUTE,
  LINKHOOKS_API_REQUESTS_PER_MINUTE, LINKHOOKS_SIGN_IN_FAILURES_PER_MINUTE
                            per-account limits (default 100 endpoints; 1,000 events/s with a burst of
                            60,000; 60 test events, 120 retries, 10 recoveries and 1,200 API requests a
                            minute) and failed sign-ins per address (IPv6: per /64) a minute
                            (default 10); past one, the API answers 429 with Retry-After
  LINKHOOKS_CONCURRENCY     attempts in flight per process (default 64)
  LINKHOOKS_PER_ENDPOINT_CAP
                            requests open to one endpoint across every process (default 8; set the
                            same on each)
  LINKHOOKS_PER_ACCOUNT_CAP, LINKHOOKS_PER_ORIGIN_CAP
                            of a process's slots, the most one account, or one receiving origin, may
                            hold (default: all but a reserve for the others, 56 of 64)
  LINKHOOKS_PER_ACCOUNT_AT_ORIGIN_CAP
                            of a receiving origin's, the most one account may hold (default: all but
                            a reserve for the other accounts there, 48 of 56)
  NODE_EXTRA_CA_CERTS       Node's own: trust an extra CA (a test receiver's)
`;

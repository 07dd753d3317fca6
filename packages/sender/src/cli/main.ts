#!/usr/bin/env node
import type { Logger } from 'pino';
/**
 * @module
 * `linkhooks-sender`: the service CLI (design D23). Exit codes: 0 done, 1 a runtime
 * failure (database unreachable, a port in use), 2 a usage error (unknown command or flag).
 *
 * Each command imports what it runs once the command line is read, so that `--help`, a usage
 * error or `migrate` does not load the engine, the stores' drivers and the HTTP service first.
 */
import { isSenderError, SenderError } from '../errors.js';
import type { MigrationReport } from '../store/migration-plan.js';
import { withCaFile } from './ca-file.js';
import { DatabaseError } from './database-error.js';
import { ListenError } from './listen-error.js';
import { masterKeysFor, rotationOf, type Say, withNamedKeysRead } from './master-keys.js';
import { migrationSummary, newerSchemaWarning } from './migration-summary.js';
import { type Command, parseCommand, USAGE, UsageError } from './options.js';

const VERSION = '0.0.0';
const SEE_USAGE = 'Run linkhooks-sender --help for every command and option.\n';

async function run(command: Command, env: NodeJS.ProcessEnv): Promise<void> {
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return;
    case 'version':
      process.stdout.write(`linkhooks-sender ${VERSION}\n`);
      return;
    case 'migrate': {
      const { maskDb, openStore } = await import('./open-store.js');
      const db = maskDb(command.db);
      let report: MigrationReport | undefined;
      const store = await openStore(command.db, (r) => {
        report = r;
      });
      await store.close();
      process.stdout.write(migrationSummary(db, report));
      warnOfNewerSchema(db, report, onTerminal);
      return;
    }
    case 'accounts-create':
    case 'accounts-list':
    case 'accounts-keys':
    case 'accounts-rotate-key':
    case 'accounts-revoke-key':
    case 'accounts-delete': {
      const { runAccounts } = await import('./accounts-command.js');
      await runAccounts(command);
      return;
    }
    case 'serve':
    case 'worker': {
      const [{ holdProcessLock }, { maskDb, openStore }, { createLogger, serve, work }] = await Promise.all([
        import('./sqlite-process-lock.js'),
        import('./open-store.js'),
        import('./run-service.js'),
      ]);
      // The files named are read before anything is written (a first start makes the database's
      // folder, lock and key file), so a wrong path leaves nothing behind.
      const engine = withCaFile(command.engine);
      const logger = createLogger(env);
      const say = saidBy(logger);
      const named = withNamedKeysRead(command.keys, say);
      // Before anything else is opened: a second process on a SQLite database stops here.
      const lock = holdProcessLock(command.db);
      try {
        const keys = masterKeysFor(named, say);
        const store = await openStore(command.db, (report) =>
          warnOfNewerSchema(maskDb(command.db), report, say),
        );
        if (command.kind === 'serve') await serve(store, { ...command, engine, keys }, env, logger);
        else await work(store, { ...command, engine, keys }, env, logger);
      } finally {
        lock.release();
      }
      return;
    }
    case 'rotate-master-key': {
      const { holdProcessLock } = await import('./sqlite-process-lock.js');
      const named = withNamedKeysRead(command.keys, onTerminal);
      // On SQLite, not beside a running service: it would go on sealing under the replaced key.
      const lock = holdProcessLock(command.db, 'before rotate-master-key');
      try {
        await rotateMasterKey(command.db, named);
      } finally {
        lock.release();
      }
      return;
    }
    case 'dev-certificate': {
      const { writeDevCertificate } = await import('./dev-certificate.js');
      await writeDevCertificate(command.dir, command.force);
      return;
    }
  }
}

function warnOfNewerSchema(db: string, report: MigrationReport | undefined, say: Say) {
  const warning = newerSchemaWarning(db, report);
  if (warning) say.warn(warning);
}

const saidBy = (logger: Logger): Say => ({
  info: (message) => logger.info(message),
  warn: (message) => logger.warn(message),
});
const onTerminal: Say = {
  info: (message) => process.stdout.write(`${message}\n`),
  warn: (message) => process.stderr.write(`linkhooks-sender: warning: ${message}\n`),
};

/** Seals every secret under the new key; only then is the old one let go (design D30). */
async function rotateMasterKey(db: string, named: ReturnType<typeof withNamedKeysRead>): Promise<void> {
  // Loaded before rotationOf writes the key files: a failed load leaves none behind.
  const [{ openStore }, { createSender }] = await Promise.all([
    import('./open-store.js'),
    import('../engine/sender.js'),
  ]);
  const { finish, ...keys } = rotationOf(named, onTerminal);
  const store = await openStore(db);
  const sender = createSender({ store, ...keys });
  try {
    const { sealed, resealed, unreadable } = await sender.sealSecrets();
    if (unreadable.length > 0) {
      throw new SenderError(
        'master_key_mismatch',
        `${unreadable.length} endpoint secrets could not be decrypted with the keys given (endpoints ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', …' : ''}); give the key they were encrypted with as LINKHOOKS_PREVIOUS_MASTER_KEY and run this again. The old key is still needed.`,
      );
    }
    const next = finish();
    process.stdout.write(
      `Encrypted ${resealed} endpoint secrets again and ${sealed} unencrypted ones under the new master key. ${next}\n`,
    );
  } finally {
    await sender.stop(0);
    await store.close();
  }
}

async function main(): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The message alone, with where the usage is: under the usage's hundred lines it scrolled away.
    process.stderr.write(`linkhooks-sender: ${error.message}\n${SEE_USAGE}`);
    return 2;
  }
  try {
    await run(command, process.env);
    return 0;
  } catch (error) {
    const known =
      error instanceof DatabaseError ||
      error instanceof UsageError ||
      error instanceof ListenError ||
      isSenderError(error);
    const message = known ? (error as Error).message : String((error as Error)?.stack ?? error);
    process.stderr.write(`linkhooks-sender: ${message}\n`);
    return 1;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`linkhooks-sender: ${String(error)}\n`);
    process.exitCode = 1;
  },
);

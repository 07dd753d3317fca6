#!/usr/bin/env node
/**
 * @module
 * `linkhooks-sender`: the service CLI (design D23). Exit codes: 0 done, 1 a runtime
 * failure (database unreachable, a port in use), 2 a usage error (unknown command or flag).
 */
import { isSenderError } from '../errors.js';
import { runAccounts } from './accounts-command.js';
import { withCaFile } from './ca-file.js';
import { writeDevCertificate } from './dev-certificate.js';
import { DatabaseError, maskDb, openStore } from './open-store.js';
import { type Command, parseCommand, USAGE, UsageError } from './options.js';
import { createLogger, serve, work } from './run-service.js';

const VERSION = '0.0.0';

async function run(command: Command, env: NodeJS.ProcessEnv): Promise<void> {
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return;
    case 'version':
      process.stdout.write(`linkhooks-sender ${VERSION}\n`);
      return;
    case 'migrate': {
      const store = await openStore(command.db);
      await store.close();
      process.stdout.write(`Migrated ${maskDb(command.db)}: the schema is up to date.\n`);
      return;
    }
    case 'accounts-create':
    case 'accounts-list':
    case 'accounts-keys':
    case 'accounts-rotate-key':
    case 'accounts-revoke-key':
    case 'accounts-delete':
      await runAccounts(command);
      return;
    case 'serve': {
      const settings = { ...command, engine: withCaFile(command.engine) };
      await serve(await openStore(command.db), settings, env, createLogger(env));
      return;
    }
    case 'worker': {
      const settings = { ...command, engine: withCaFile(command.engine) };
      await work(await openStore(command.db), settings, env, createLogger(env));
      return;
    }
    case 'dev-certificate':
      await writeDevCertificate(command.dir, command.force);
      return;
  }
}

async function main(): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`linkhooks-sender: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    await run(command, process.env);
    return 0;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const known = error instanceof DatabaseError || error instanceof UsageError || isSenderError(error);
    const message =
      code === 'EADDRINUSE' || code === 'EACCES'
        ? `cannot listen: ${(error as Error).message}`
        : known
          ? (error as Error).message
          : String((error as Error)?.stack ?? error);
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

/**
 * Why the reference app would not start, as a value the command line turns into one plain
 * sentence: another run holds the database, the database is not the app's to replace, or a port is
 * taken. Nothing has been changed on disk when one is thrown.
 */
export type StartErrorCode = 'database_in_use' | 'database_not_ours' | 'port_in_use' | 'port_refused';

export class StartError extends Error {
  override readonly name = 'StartError';
  constructor(
    readonly code: StartErrorCode,
    message: string,
    readonly detail: { pid?: number; port?: number; server?: 'service' | 'receiver' } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isStartError(error: unknown): error is StartError {
  return (
    error instanceof Error && error.name === 'StartError' && typeof (error as StartError).code === 'string'
  );
}

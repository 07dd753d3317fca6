/** A command line the CLI cannot run: exit code 2, with the message and where the usage is. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

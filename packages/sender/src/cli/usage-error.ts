/**
 * A setting the CLI cannot use. Refused while the command line is read: exit code 2, with the
 * message and where the usage is; refused once the command runs (a file it names cannot be read):
 * exit code 1, with the message.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

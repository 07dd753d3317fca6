/** A database the CLI cannot open, reach or lock: exit code 1, with a message naming it. */
export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
}

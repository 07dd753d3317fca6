/**
 * Whether `filename` names no file: SQLite keeps the database in memory. Apart from the driver, so
 * that reading the command line's settings does not load it.
 */
export const isInMemory = (filename: string) => filename === ':memory:' || filename === '';

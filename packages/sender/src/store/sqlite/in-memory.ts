/** Whether `filename` names no file: SQLite keeps the database in memory. */
export const isInMemory = (filename: string) => filename === ':memory:' || filename === '';

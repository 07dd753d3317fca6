/** The one identifier ever put into SQL text is the schema's name: checked here, then quoted. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/** A plain lowercase name of at most 63 bytes (PostgreSQL's identifier limit). */
export function isSchemaName(schema: string): boolean {
  return SCHEMA_NAME.test(schema) && schema.length <= 63;
}

/** The schema as a quoted identifier; throws unless isSchemaName. */
export function quoteSchema(schema: string): string {
  if (!isSchemaName(schema)) {
    throw new TypeError(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*`);
  }
  return `"${schema}"`;
}

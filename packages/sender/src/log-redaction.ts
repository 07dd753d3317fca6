/** What never reaches a log line, even when a caller logs a record whole: secrets, keys, request headers. */
export const REDACTED_PATHS = ['secret', '*.secret', 'headers', '*.headers', 'apiKey', '*.apiKey'];

export const redaction = { paths: REDACTED_PATHS, remove: true };

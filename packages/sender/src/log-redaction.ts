/**
 * What never reaches a log line, even when a caller logs a record whole: secrets, keys, request
 * headers (an `authorization` among them), at the top of a line's object and two levels into it
 * (an error's `request.headers`, an endpoint inside a notice). pino's paths name each depth.
 */
const NEVER_LOGGED = ['secret', 'headers', 'authorization', 'apiKey', 'api_key'];

export const REDACTED_PATHS = NEVER_LOGGED.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

export const redaction = { paths: REDACTED_PATHS, remove: true };

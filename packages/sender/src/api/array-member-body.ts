/**
 * A large body of one array member, `{"events": [...]}`, parsed an item at a time (design D63):
 * each item's text becomes a string of its own for JSON.parse. The whole body as one string would
 * be over V8's largest ordinary object and go to its large-object space, a mapping made and freed
 * for each request (5 times the cost per item of a body just under it).
 */

/**
 * Bodies up to this many bytes are parsed whole: V8's largest ordinary object. (A string of the
 * body is about as large: one byte a character for ASCII text, two for text beyond Latin-1.)
 */
export const WHOLE_BODY_MAX_BYTES = 128 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
function skipSpace(bytes: Buffer, at: number): number {
  while (isSpace(bytes[at])) at++;
  return at;
}

/** The index of the quote that closes the string opened at `open`, or -1. */
function stringEnd(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at; // an odd run escapes the quote
  }
}

/**
 * The body as JSON.parse would give it, when it is exactly `{"<member>": [items]}` (JSON
 * whitespace anywhere between), with at most `maxItems` items, each of which parses on its own:
 * then the whole body is valid JSON and its value is the list of the items' values. Null for
 * anything else, which the caller parses whole, so its answer or its error is JSON.parse's own.
 * Items are cut at the commas outside strings and nesting.
 */
export function parseArrayMemberBody(
  bytes: Buffer,
  member: string,
  maxItems: number,
): Record<string, unknown[]> | null {
  let at = skipSpace(bytes, 0);
  if (bytes[at] !== OPEN_OBJECT) return null;
  at = skipSpace(bytes, at + 1);
  const name = Buffer.from(JSON.stringify(member));
  if (!bytes.subarray(at, at + name.length).equals(name)) return null;
  at = skipSpace(bytes, at + name.length);
  if (bytes[at] !== COLON) return null;
  at = skipSpace(bytes, at + 1);
  if (bytes[at] !== OPEN_ARRAY) return null;
  const cuts: number[] = [at];
  let depth = 0;
  for (at++; at < bytes.length; at++) {
    const c = bytes[at];
    if (c === QUOTE) {
      at = stringEnd(bytes, at);
      if (at === -1) return null;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
      else if (c === CLOSE_OBJECT) return null;
      else {
        cuts.push(at);
        break;
      }
    } else if (c === COMMA && depth === 0) {
      // One item more after this comma: past maxItems, the body is parsed whole, as the route expects.
      if (cuts.length >= maxItems) return null;
      cuts.push(at);
    }
  }
  if (at >= bytes.length) return null;
  at = skipSpace(bytes, at + 1);
  if (bytes[at] !== CLOSE_OBJECT || skipSpace(bytes, at + 1) !== bytes.length) return null;
  const items: unknown[] = [];
  for (let i = 1; i < cuts.length; i++) {
    try {
      items.push(JSON.parse(bytes.toString('utf8', cuts[i - 1]! + 1, cuts[i])));
    } catch {
      return null; // an empty array, a stray comma, a broken item: JSON.parse of the whole says which
    }
  }
  return { [member]: items };
}

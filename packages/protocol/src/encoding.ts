/** Byte helpers shared by signing and verification; no Node `Buffer`, so they run anywhere. */

const HEX = '0123456789abcdef';
const utf8 = new TextEncoder();

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    out += HEX[b >> 4]! + HEX[b & 15]!;
  }
  return out;
}

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F: accepted, some senders write uppercase
  return -1;
}

/**
 * Decodes exactly `byteLength` bytes of hex, upper or lower case. Returns `null` for any other
 * length or any non-hex character, so callers never compare buffers of different sizes.
 */
export function fromHex(hex: string, byteLength: number): Uint8Array | null {
  if (hex.length !== byteLength * 2) return null;
  const out = new Uint8Array(byteLength);
  for (let i = 0; i < byteLength; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return null;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** UTF-8 bytes of a string; bytes pass through untouched. */
export function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? utf8.encode(data) : data;
}

/** base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Standard base64 with padding, the form Standard Webhooks libraries decode. */
export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
  return btoa(bin);
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The 6-bit value of each ASCII code, both alphabets; -1 for anything else. */
const BASE64_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) values[BASE64_ALPHABET.charCodeAt(i)] = i;
  values[45] = 62; // -
  values[95] = 63; // _
  return values;
})();

/**
 * Decodes base64 in either alphabet (`+/` or `-_`), padding optional. Returns `null` for any other
 * character or an impossible length, never throws. A table, not `atob`: it runs on every
 * verification, for the key and each signature.
 */
export function fromBase64(text: string): Uint8Array | null {
  if (typeof text !== 'string') return null;
  let end = text.length;
  if (end > 0 && text.charCodeAt(end - 1) === 61) end--; // '='
  if (end > 0 && text.charCodeAt(end - 1) === 61) end--;
  if (end % 4 === 1) return null;
  const out = new Uint8Array((end * 3) >> 2);
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? BASE64_VALUES[code]! : -1;
    if (value < 0) return null;
    acc = (acc << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

/** `a` then `b` in one new array. */
export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Identifiers: a prefix and a ULID-style body (48-bit time + 80 random bits, Crockford base32),
 * so ids sort by creation time and serve as stable cursors for the delivery log.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
let lastRandom: number[] = [];

// Random bytes are drawn 4 KiB at a time: a call to the system's generator per id cost more than
// the rest of making it, at an id per event and one per delivery.
const pool = new Uint8Array(4096);
let taken = pool.length;

function randomDigits(): number[] {
  if (taken + 16 > pool.length) {
    globalThis.crypto.getRandomValues(pool);
    taken = 0;
  }
  const digits = Array.from(pool.subarray(taken, taken + 16), (b) => b & 31);
  taken += 16;
  return digits;
}

export type IdPrefix = 'evt' | 'dlv' | 'ep' | 'acct' | 'att' | 'key' | 'ntc';

/** A new id such as `dlv_01JD8X3K9Q2W5E7R9T1Y3U5I7O`; in the order made within a process's millisecond. */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let random: number[];
  if (now === lastTime) {
    // Same millisecond: increment the random part so order still holds. After a clock step back
    // the id carries the earlier time, as the record made with it does: an id's time is when it
    // was made, and windows of time are read as ranges of ids (idsFrom).
    random = lastRandom.slice();
    for (let i = random.length - 1; i >= 0; i--) {
      if (random[i]! < 31) {
        random[i]! += 1;
        break;
      }
      random[i] = 0;
    }
  } else {
    random = randomDigits();
    lastTime = now;
  }
  lastRandom = random;
  return `${idsFrom(prefix, now)}${random.map((d) => ALPHABET[d]).join('')}`;
}

/**
 * The least id of `prefix` made at `ms` or later: every id made before `ms` sorts below it, every
 * id made at or after it at or above. A window of ids by creation time is `[idsFrom(since),
 * idsFrom(until))`, read from any index that ends in the id.
 */
export function idsFrom(prefix: IdPrefix, ms: number): string {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  return `${prefix}_${time}`;
}

/**
 * Identifiers: a prefix and a ULID-style body (48-bit time + 80 random bits, Crockford base32),
 * so ids sort by creation time and serve as stable cursors for the delivery log. PostgreSQL's
 * delivery ids are made in SQL in the same form, the 80 bits a run (newRun) and a count.
 */
import { pooledRandom } from './random-pool.js';

/** The digits of ids (Crockford's base 32), in ascending order: digits compare as their values do. */
export const ID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomDigits(): number[] {
  return Array.from(pooledRandom(16), (b) => b & 31);
}

export type IdPrefix = 'evt' | 'dlv' | 'ep' | 'acct' | 'att' | 'key' | 'ntc';

/**
 * The kinds whose ids keep the order they were made in even when the time given goes back: an
 * operator notice is sent in id order, and a warning must not sort after the disabling made after
 * it (design D50). Every other id carries the time it is given, the time of the record made with
 * it: windows of time are read as ranges of ids (idsFrom).
 */
const KEPT_IN_ORDER: ReadonlySet<IdPrefix> = new Set(['ntc']);

/**
 * Each kind's last id: its time and random part, moved on in place. Kept per kind, so one kind's
 * ids never move another's. A kind's first id finds `NaN`, equal to no time.
 */
const last = new Map<IdPrefix, { time: number; random: number[] }>();

/** A new id such as `dlv_01JD8X3K9Q2W5E7R9T1Y3U5I7O`; a kind's ids of one millisecond sort in the order made. */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let state = last.get(prefix);
  if (!state) {
    state = { time: Number.NaN, random: [] };
    last.set(prefix, state);
  }
  if (now === state.time || (now < state.time && KEPT_IN_ORDER.has(prefix))) {
    // The same millisecond (or, for a kind kept in order, an earlier one): the random part goes up by one.
    const { random } = state;
    for (let i = random.length - 1; i >= 0; i--) {
      if (random[i]! < 31) {
        random[i]! += 1;
        break;
      }
      random[i] = 0;
    }
  } else {
    state.time = now;
    state.random = randomDigits();
  }
  return `${idsFrom(prefix, state.time)}${state.random.map((d) => ID_ALPHABET[d]).join('')}`;
}

/**
 * The least id of `prefix` made at `ms` or later: every id made before `ms` sorts below it, every
 * id made at or after it at or above. A window of ids by creation time is `[idsFrom(since),
 * idsFrom(until))`, read from any index that ends in the id.
 */
export function idsFrom(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${idDigits(ms, 10)}`;
}

/** `n` as `count` digits of ID_ALPHABET, the most significant first (a number under 32 ** count). */
export function idDigits(n: number, count: number): string {
  let digits = '';
  for (let i = 0; i < count; i++, n = Math.floor(n / 32)) digits = ID_ALPHABET[n % 32]! + digits;
  return digits;
}

/** Digits of a run (newRun): the first part of an id's 16 after its time. */
export const RUN_DIGITS = 10;
/** The rest of the 16: an id's count among those made with its run (a billion of them). */
export const COUNT_DIGITS = 16 - RUN_DIGITS;
let lastRun = Number.NaN;

/**
 * RUN_DIGITS digits that the ids of one batch made elsewhere (in SQL) share after their time
 * part, each id's count in its batch after them: random the first time, one more at each call
 * after, so that the batches one process makes in a millisecond sort in the order they were made,
 * as newId's ids do. Another process starts at a random point of its own.
 */
export function newRun(): string {
  if (Number.isNaN(lastRun)) {
    // Below 2 ** 45, so that counting on never needs an eleventh digit (2 ** 50).
    const [high, low] = globalThis.crypto.getRandomValues(new Uint32Array(2));
    lastRun = (high! % 2 ** 13) * 2 ** 32 + low!;
  } else lastRun += 1;
  return idDigits(lastRun, RUN_DIGITS);
}

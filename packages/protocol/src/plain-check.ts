/**
 * The envelope schemas (schemas.ts) turned into plain JavaScript checks, for the common case of a
 * valid delivery: a zod parse copies every object of the envelope, about a tenth of a verification's
 * time. A check answers only "certainly valid"; anything else (an invalid value, an object or record
 * with an own `__proto__` key, which zod drops from its copy, an object with another prototype) goes
 * to zod, which gives the issues or its own result. Values zod does not copy (`unknown`) are not
 * looked into, as zod does not look. The zod schemas stay the one home of each field's rule: a construct this
 * file does not know compiles to no check at all, and every value then goes to zod.
 */
import type { z } from 'zod';

/** True only when zod would accept `value` and return an equal value. */
export type PlainCheck = (value: unknown) => boolean;

interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  catchall?: { _zod: { def: Def } };
  checks?: {
    _zod: {
      def: {
        check: string;
        format?: string;
        minimum?: number;
        maximum?: number;
        fn?: unknown;
        pattern?: unknown;
      };
    };
  }[];
  element?: { _zod: { def: Def } };
  keyType?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
  values?: unknown[];
  entries?: Record<string, unknown>;
  innerType?: { _zod: { def: Def } };
}

// What JSON.parse makes; zod's copy of any other object would differ from it (its prototype).
const isPlainRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  Object.getPrototypeOf(v) === Object.prototype &&
  !Object.hasOwn(v, '__proto__');

/** The definition keys each compiled type may have: another key (a format, a default) is unknown here. */
const DEF_KEYS: Record<string, readonly string[]> = {
  unknown: ['type'],
  string: ['type', 'checks'],
  number: ['type', 'checks'],
  boolean: ['type'],
  literal: ['type', 'values'],
  enum: ['type', 'entries'],
  optional: ['type', 'innerType'],
  array: ['type', 'element'],
  record: ['type', 'keyType', 'valueType'],
  object: ['type', 'shape', 'catchall'],
};
const CHECK_KEYS: Record<string, readonly string[]> = {
  number_format: ['type', 'check', 'abort', 'format'],
  min_length: ['check', 'minimum', 'when'],
  max_length: ['check', 'maximum', 'when'],
  string_format: ['check', 'format', 'error', 'pattern', 'abort'],
  custom: ['type', 'check', 'fn', 'error', 'abort'],
};
const only = (object: object, keys: readonly string[] | undefined) =>
  keys !== undefined && Object.keys(object).every((k) => keys.includes(k));

/** The checks zod runs after the type, for the kinds the schemas use; null for any other kind. */
function compileRefinements(def: Def): ((v: never) => boolean)[] | null {
  const out: ((v: never) => boolean)[] = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (!only(c, CHECK_KEYS[c.check])) return null;
    if (c.check === 'number_format' && c.format === 'safeint') out.push(Number.isSafeInteger as never);
    else if (c.check === 'min_length' && typeof c.minimum === 'number') {
      const min = c.minimum;
      out.push(((v: string) => v.length >= min) as never);
    } else if (c.check === 'max_length' && typeof c.maximum === 'number') {
      const max = c.maximum;
      out.push(((v: string) => v.length <= max) as never);
    } else if (
      c.check === 'string_format' &&
      c.format === 'regex' &&
      c.pattern instanceof RegExp &&
      // A global or sticky pattern's test depends on its lastIndex.
      !c.pattern.global &&
      !c.pattern.sticky
    ) {
      const pattern = c.pattern;
      out.push(((v: string) => pattern.test(v)) as never);
    } else if (c.check === 'custom' && typeof c.fn === 'function') {
      const fn = c.fn as (v: unknown) => unknown;
      out.push(((v: unknown) => fn(v) === true) as never);
    } else return null;
  }
  return out;
}

function compileDef(def: Def): PlainCheck | null {
  if (!only(def, DEF_KEYS[def.type])) return null;
  const refinements = compileRefinements(def);
  if (refinements === null) return null;
  const base = compileType(def);
  if (base === null) return null;
  if (refinements.length === 0) return base;
  // Integers, the commonest refinement: Number.isSafeInteger is the type check and the rule at once.
  if (def.type === 'number' && refinements.length === 1 && refinements[0] === Number.isSafeInteger)
    return Number.isSafeInteger;
  if (refinements.length === 1) {
    const only = refinements[0]!;
    return (v) => base(v) && only(v as never);
  }
  return (v) => {
    if (!base(v)) return false;
    for (const r of refinements) if (!r(v as never)) return false;
    return true;
  };
}

function compileType(def: Def): PlainCheck | null {
  switch (def.type) {
    case 'unknown':
      return () => true;
    case 'string':
      return (v) => typeof v === 'string';
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'literal': {
      const values = def.values ?? [];
      return (v) => values.includes(v);
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries ?? {}));
      return (v) => values.has(v);
    }
    case 'optional': {
      const inner = def.innerType && compileDef(def.innerType._zod.def);
      if (!inner) return null;
      return (v) => v === undefined || inner(v);
    }
    case 'array': {
      const element = def.element && compileDef(def.element._zod.def);
      if (!element) return null;
      if (def.element!._zod.def.type === 'unknown') return Array.isArray;
      return (v) => Array.isArray(v) && v.every(element);
    }
    case 'record': {
      if (def.keyType?._zod.def.type !== 'string' || (def.keyType._zod.def.checks ?? []).length > 0)
        return null;
      const value = def.valueType && compileDef(def.valueType._zod.def);
      if (!value) return null;
      if (def.valueType!._zod.def.type === 'unknown') return isPlainRecord;
      return (v) => isPlainRecord(v) && Object.values(v).every(value);
    }
    case 'object': {
      // Open objects (z.looseObject), whose unknown fields zod passes through, and strict ones
      // (z.strictObject), which zod refuses with any: a plain object (z.object) would lose them.
      const catchall = def.catchall?._zod.def.type;
      if ((catchall !== 'unknown' && catchall !== 'never') || !def.shape) return null;
      const strict = catchall === 'never';
      const known = new Set(Object.keys(def.shape));
      const keys: string[] = [];
      const checks: PlainCheck[] = [];
      // An optional field may be missing; one present is checked (an own `undefined` included).
      const optional: boolean[] = [];
      // The value's prototype is Object.prototype (isPlainRecord): reading a key that is not one of
      // its members gives the own value or undefined, which a check refusing undefined refuses. Only
      // the other keys need the slower own-property test. (With the integer case above: parseEvent of
      // a valid click 0.43 → 0.28 µs.)
      const ownTest: boolean[] = [];
      for (const [key, schema] of Object.entries(def.shape)) {
        const check = compileDef(schema._zod.def);
        if (!check) return null;
        const isOptional = schema._zod.def.type === 'optional';
        keys.push(key);
        checks.push(isOptional ? compileDef(schema._zod.def.innerType!._zod.def)! : check);
        optional.push(isOptional);
        ownTest.push(key in Object.prototype || (!isOptional && check(undefined)));
      }
      return (v) => {
        if (!isPlainRecord(v)) return false;
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          if (optional[i]) {
            // Missing is fine, but for a member of Object.prototype, which zod reads inherited.
            if (Object.hasOwn(v, key) ? !checks[i]!(v[key]) : ownTest[i]) return false;
            continue;
          }
          if (ownTest[i] && !Object.hasOwn(v, key)) return false;
          if (!checks[i]!(v[key])) return false;
        }
        if (strict) for (const key in v) if (!known.has(key)) return false;
        return true;
      };
    }
    default:
      return null;
  }
}

/**
 * A plain check of `schema`, or null when it uses a construct this file does not compile.
 *
 * @example
 * const check = compilePlainCheck(eventSchemas.click);
 * const event = check?.(value) ? value : eventSchemas.click.parse(value);
 */
export function compilePlainCheck(schema: z.ZodType): PlainCheck | null {
  return compileDef((schema as unknown as { _zod: { def: Def } })._zod.def);
}

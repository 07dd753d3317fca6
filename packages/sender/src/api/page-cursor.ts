/** A page's `cursor` and `limit` query parameters; the cursor checked by the one rule (domain/page-cursor.ts). */
import { z } from 'zod';
import { type CursorPrefix, isPageCursor, pageCursorProblem } from '../domain/page-cursor.js';

export const pageCursor = (prefix: CursorPrefix) =>
  z
    .string()
    .refine((value) => isPageCursor(prefix, value), pageCursorProblem(prefix))
    .optional()
    .describe('next_cursor of the previous page');

/**
 * A page's `limit`: the digits of a whole number from 1 to `max`. The API document gives it as the
 * integer it stands for, so a generated client takes a number, not a string.
 */
export const pageLimit = (max: number, byDefault: number) => {
  const range = `from 1 to ${max}`;
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${String(max).length}}$`), `limit must be a whole number ${range}`)
    .transform(Number)
    .pipe(z.number().int().min(1, 'limit must be at least 1').max(max, `limit must be at most ${max}`))
    .optional()
    .meta({ description: `1 to ${max}, default ${byDefault}`, type: 'integer', minimum: 1, maximum: max });
};

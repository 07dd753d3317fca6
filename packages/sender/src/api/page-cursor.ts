/** A page's `cursor` query parameter, checked by the one rule (domain/page-cursor.ts). */
import { z } from 'zod';
import { type CursorPrefix, isPageCursor, pageCursorProblem } from '../domain/page-cursor.js';

export const pageCursor = (prefix: CursorPrefix) =>
  z
    .string()
    .refine((value) => isPageCursor(prefix, value), pageCursorProblem(prefix))
    .optional()
    .describe('next_cursor of the previous page');

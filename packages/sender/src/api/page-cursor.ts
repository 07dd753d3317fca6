/**
 * A page's `cursor` query parameter: the `next_cursor` of the page before, the id of its last item.
 * Anything else is refused: compared as an id, a cursor that is not one read from the first page
 * again, or read nothing, and a client looping over pages never learned its cursor was broken.
 */
import { z } from 'zod';

export const pageCursor = (prefix: 'dlv' | 'acct') =>
  z
    .string()
    .regex(
      new RegExp(`^${prefix}_[0-9A-Za-z]{1,96}$`),
      `cursor must be the next_cursor of a page before, as it came (${prefix}_…)`,
    )
    .optional()
    .describe('next_cursor of the previous page');

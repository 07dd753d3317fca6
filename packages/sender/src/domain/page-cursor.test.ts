import { describe, expect, it } from 'vitest';
import { createSender } from '../engine/sender.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newId } from './ids.js';
import { isPageCursor } from './page-cursor.js';

describe('a page cursor', () => {
  it('is an id of the page’s kind, as a page gives it', () => {
    expect(isPageCursor('dlv', newId('dlv'))).toBe(true);
    expect(isPageCursor('acct', newId('acct'))).toBe(true);
    // PostgreSQL's delivery ids: the event's time part, a run and a count (publish.ts), upper case.
    expect(isPageCursor('dlv', 'dlv_01JD8X3K9Q0123456789ABCDEF')).toBe(true);
    for (const value of ['garbage', '', 'dlv_', newId('acct'), `${newId('dlv')}'--`, `dlv_${'A'.repeat(97)}`])
      expect(isPageCursor('dlv', value), value).toBe(false);
  });

  it('is checked by the library’s lists too, not only by the API', async () => {
    const sender = createSender({ store: createMemoryStore() });
    try {
      await expect(sender.listAccounts({ cursor: 'garbage' })).rejects.toThrow(
        'cursor must be the next_cursor of a page before, as it came (acct_…)',
      );
      await expect(sender.listAccounts({ cursor: newId('acct') })).resolves.toMatchObject({ items: [] });
      await expect(sender.listDeliveries('acct_a', { cursor: 'garbage', limit: 20 })).rejects.toThrow(
        'cursor must be the next_cursor of a page before, as it came (dlv_…)',
      );
      await expect(
        sender.listDeliveries('acct_a', { cursor: newId('dlv'), limit: 20 }),
      ).resolves.toMatchObject({
        items: [],
      });
    } finally {
      await sender.stop(0);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { isSenderError } from '../errors.js';
import type { AccountRecord } from '../store/records.js';
import { ACCOUNT_TTL_MS, createIngest } from './ingest.js';

const ACCOUNT: AccountRecord = {
  id: 'acct_a',
  name: 'A',
  plan: 'business',
  apiKeyHash: 'h',
  createdAt: 0,
};

/** A getAccount whose lookups wait until the test answers them, and a clock the test moves. */
function heldLookups() {
  const pending: { id: string; answer: (a: AccountRecord | null) => void; fail: (e: Error) => void }[] = [];
  let time = 1_000;
  const ingest = createIngest(
    {
      getAccount: (id) =>
        new Promise((answer, fail) => {
          pending.push({ id, answer, fail });
        }),
    },
    () => time,
  );
  const item = (accountId = ACCOUNT.id) =>
    ingest.item({ account_id: accountId, event: 'link.clicked', data: {} } as never);
  /** An event taken once `lookups` lookups have been made (checked before it is awaited: an extra one fails at once). */
  const itemAfter = (lookups: number) => {
    const taken = item();
    expect(pending).toHaveLength(lookups);
    return taken;
  };
  return {
    ingest,
    item,
    itemAfter,
    pending,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'taken',
    (e: unknown) => (isSenderError(e) ? e.code : (e as Error).message),
  );

describe('createIngest: the account lookup', () => {
  it('makes one lookup for the events that arrive while it is under way', async () => {
    const { item, itemAfter, pending } = heldLookups();
    const items = Array.from({ length: 32 }, () => item());
    expect(pending).toHaveLength(1);
    pending[0]!.answer(ACCOUNT);
    const published = await Promise.all(items);
    expect(published.map((p) => p.accountId)).toEqual(Array.from({ length: 32 }, () => ACCOUNT.id));
    await itemAfter(1);
  });

  it('looks the account up again once, for all the events that find its entry run out', async () => {
    const { item, itemAfter, pending, advance } = heldLookups();
    const first = item();
    pending[0]!.answer(ACCOUNT);
    await first;
    advance(ACCOUNT_TTL_MS - 1);
    await itemAfter(1);
    advance(1);
    const items = Array.from({ length: 8 }, () => item());
    expect(pending).toHaveLength(2);
    pending[1]!.answer({ ...ACCOUNT, plan: 'free' });
    expect(await Promise.all(items.map(codeOf))).toEqual(Array.from({ length: 8 }, () => 'plan_required'));
  });

  it('counts the entry’s time from the lookup’s answer, not its start', async () => {
    const { item, itemAfter, pending, advance } = heldLookups();
    const first = item();
    advance(ACCOUNT_TTL_MS * 2); // a slow lookup
    pending[0]!.answer(ACCOUNT);
    await first;
    advance(ACCOUNT_TTL_MS - 1);
    await itemAfter(1);
  });

  it('starts another lookup for the events that come once one has been under way as long as an entry lasts', async () => {
    const { item, itemAfter, pending, advance } = heldLookups();
    const stuck = item();
    advance(ACCOUNT_TTL_MS - 1);
    const waiting = item();
    expect(pending).toHaveLength(1);
    advance(1);
    const next = item();
    expect(pending).toHaveLength(2);
    pending[1]!.answer(ACCOUNT);
    expect((await next).accountId).toBe(ACCOUNT.id);
    await itemAfter(2); // the second lookup's answer is kept
    pending[0]!.answer(null);
    expect(await codeOf(stuck)).toBe('not_found');
    expect(await codeOf(waiting)).toBe('not_found');
    expect((await itemAfter(2)).accountId).toBe(ACCOUNT.id); // a late answer of the first replaces nothing
  });

  it('keeps no failed lookup: its events see the failure, the next event looks the account up again', async () => {
    const { item, pending } = heldLookups();
    const items = [item(), item()];
    pending[0]!.fail(new Error('the lookup broke'));
    expect(await Promise.all(items.map(codeOf))).toEqual(['the lookup broke', 'the lookup broke']);
    const next = item();
    expect(pending).toHaveLength(2);
    pending[1]!.answer(ACCOUNT);
    expect((await next).accountId).toBe(ACCOUNT.id);
  });

  it('answers not_found for an account that is not there, and looks it up again after forget', async () => {
    const { ingest, item, pending } = heldLookups();
    const missing = item('acct_gone');
    pending[0]!.answer(null);
    expect(await codeOf(missing)).toBe('not_found');
    expect(await codeOf(item('acct_gone'))).toBe('not_found');
    expect(pending).toHaveLength(1);
    ingest.forget('acct_gone');
    const again = item('acct_gone');
    expect(pending).toHaveLength(2);
    pending[1]!.answer({ ...ACCOUNT, id: 'acct_gone' });
    expect((await again).accountId).toBe('acct_gone');
  });
});

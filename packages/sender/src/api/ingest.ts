/**
 * Platform ingest: an ingest body checked and turned into a publish. The account of each event is
 * looked up once per few seconds, not once per event: at click-stream rates that lookup would be
 * a database round trip per event on PostgreSQL. A plan change reaches ingest within ACCOUNT_TTL_MS.
 * The events that arrive while an account is being looked up wait for that one lookup: each
 * making its own, every client of a busy account sent one when its entry ran out.
 */
import type { PublishItem, Sender } from '../engine/sender.js';
import { SenderError } from '../errors.js';
import type { AccountRecord } from '../store/records.js';
import { checkPlan } from './auth.js';
import { parseBody } from './parse-body.js';
import { type IngestBody, ingestBodySchema } from './schemas.js';

export const ACCOUNT_TTL_MS = 5_000;
const ACCOUNTS_KEPT = 10_000;

export interface Ingest {
  /** The publish an ingest body asks for, or the SenderError it answers with. */
  item(body: IngestBody): Promise<PublishItem>;
  /** The same for a body not yet checked against the schema (an item of a batch). */
  parsedItem(raw: unknown): Promise<PublishItem>;
  /** Drops what is known of an account (it was deleted), so its next event looks it up again. */
  forget(accountId: string): void;
}

export function createIngest(sender: Pick<Sender, 'getAccount'>, now = () => Date.now()): Ingest {
  /**
   * `until` is counted from the lookup's start while it is under way, then from its answer: a lookup
   * that has not answered by then (stuck on a connection) is not waited on by the events after it.
   */
  const accounts = new Map<string, { account: Promise<AccountRecord | null>; until: number }>();

  function lookUp(id: string) {
    if (accounts.size >= ACCOUNTS_KEPT) accounts.clear(); // bounded; refilled on demand
    const entry = { account: sender.getAccount(id), until: now() + ACCOUNT_TTL_MS };
    accounts.set(id, entry);
    entry.account.then(
      () => {
        entry.until = now() + ACCOUNT_TTL_MS;
      },
      // A lookup that failed is not kept: the next event looks the account up again.
      () => {
        if (accounts.get(id) === entry) accounts.delete(id);
      },
    );
    return entry;
  }

  async function account(id: string): Promise<AccountRecord> {
    let cached = accounts.get(id);
    if (!cached || cached.until <= now()) cached = lookUp(id);
    const account = await cached.account;
    if (!account) throw new SenderError('not_found', `no account ${id}`);
    return checkPlan(account, 'by id');
  }

  async function item(body: IngestBody): Promise<PublishItem> {
    const { id } = await account(body.account_id);
    return {
      accountId: id,
      event: body.event,
      data: body.data,
      ...(body.timestamp !== undefined ? { timestamp: body.timestamp } : {}),
      ...(body.event_id !== undefined ? { eventId: body.event_id } : {}),
    };
  }

  return {
    item,
    async parsedItem(raw) {
      return item(parseBody(ingestBodySchema, raw));
    },
    forget: (accountId) => void accounts.delete(accountId),
  };
}

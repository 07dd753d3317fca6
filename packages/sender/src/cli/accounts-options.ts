/**
 * `linkhooks-sender accounts …` (design D23, D37): its subcommands' flags parsed into a command, by
 * a pure function like the rest of options.ts.
 */
import type { ParseArgsConfig } from 'node:util';
import { isPlan } from '../accounts.js';
import { isPageCursor, pageCursorProblem } from '../domain/page-cursor.js';
import { PLANS, type Plan } from '../store/records.js';

export type AccountsCommand =
  | { kind: 'accounts-create'; db: string; name: string; plan: Plan; json: boolean }
  | { kind: 'accounts-list'; db: string; json: boolean; limit: number; cursor?: string }
  | { kind: 'accounts-keys'; db: string; id: string; json: boolean }
  | { kind: 'accounts-rotate-key'; db: string; id: string; graceSeconds?: number; json: boolean }
  | { kind: 'accounts-revoke-key'; db: string; id: string; key: string; json: boolean }
  | { kind: 'accounts-delete'; db: string; id: string; json: boolean };

export const ACCOUNTS_SUBCOMMANDS = ['create', 'list', 'keys', 'rotate-key', 'revoke-key', 'delete'] as const;

type Values = Record<string, string | boolean | undefined>;
type Options = NonNullable<ParseArgsConfig['options']>;

/** `parse` and `dbOf` are options.ts's own, passed in so both files share one way of reading flags. */
export function parseAccounts(
  sub: string | undefined,
  args: string[],
  parse: (args: string[], options: Options, command: string) => Values,
  dbOf: (values: Values) => string,
  usageError: (message: string) => Error,
  dbFlags: Options,
): AccountsCommand {
  const command = `accounts ${sub}`;
  const flags = (extra: Options) => parse(args, { ...dbFlags, json: { type: 'boolean' }, ...extra }, command);
  const id = (values: Values) => {
    if (typeof values.id !== 'string' || values.id === '')
      throw usageError(`${command}: --id ACCOUNT is required`);
    return values.id;
  };
  switch (sub) {
    case 'create': {
      const values = flags({ name: { type: 'string' }, plan: { type: 'string' } });
      if (typeof values.name !== 'string') throw usageError('accounts create: --name is required');
      if (!isPlan(values.plan)) {
        throw usageError(
          `accounts create: --plan ${typeof values.plan === 'string' ? 'must be' : 'is required:'} one of ${PLANS.join(', ')}`,
        );
      }
      return {
        kind: 'accounts-create',
        db: dbOf(values),
        name: values.name,
        plan: values.plan,
        json: values.json === true,
      };
    }
    case 'list': {
      const values = flags({ limit: { type: 'string' }, cursor: { type: 'string' } });
      const raw = (values.limit as string | undefined) ?? '100';
      if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000) {
        throw usageError('accounts list: --limit must be a whole number from 1 to 1000');
      }
      if (typeof values.cursor === 'string' && !isPageCursor('acct', values.cursor)) {
        throw usageError(`accounts list: --${pageCursorProblem('acct')}`);
      }
      return {
        kind: 'accounts-list',
        db: dbOf(values),
        json: values.json === true,
        limit: Number(raw),
        ...(typeof values.cursor === 'string' ? { cursor: values.cursor } : {}),
      };
    }
    case 'keys': {
      const values = flags({ id: { type: 'string' } });
      return { kind: 'accounts-keys', db: dbOf(values), id: id(values), json: values.json === true };
    }
    case 'rotate-key': {
      const values = flags({ id: { type: 'string' }, grace: { type: 'string' } });
      const grace = values.grace as string | undefined;
      if (grace !== undefined && (!/^\d{1,5}$/.test(grace) || Number(grace) > 86_400)) {
        throw usageError('accounts rotate-key: --grace must be a whole number of seconds from 0 to 86400');
      }
      return {
        kind: 'accounts-rotate-key',
        db: dbOf(values),
        id: id(values),
        json: values.json === true,
        ...(grace !== undefined ? { graceSeconds: Number(grace) } : {}),
      };
    }
    case 'revoke-key': {
      const values = flags({ id: { type: 'string' }, key: { type: 'string' } });
      if (typeof values.key !== 'string' || values.key === '') {
        throw usageError('accounts revoke-key: --key KEY_ID is required (see "accounts keys --id ACCOUNT")');
      }
      return {
        kind: 'accounts-revoke-key',
        db: dbOf(values),
        id: id(values),
        key: values.key,
        json: values.json === true,
      };
    }
    case 'delete': {
      const values = flags({ id: { type: 'string' }, yes: { type: 'boolean' } });
      const account = id(values);
      if (values.yes !== true) {
        throw usageError(
          `accounts delete: this deletes ${account} and everything it owns; add --yes to confirm`,
        );
      }
      return { kind: 'accounts-delete', db: dbOf(values), id: account, json: values.json === true };
    }
    default:
      throw usageError(`accounts: the subcommands are ${ACCOUNTS_SUBCOMMANDS.join(', ')}`);
  }
}

/**
 * `linkhooks-sender accounts list|keys|rotate-key|revoke-key|delete` run as an operator would,
 * beside a running `serve`: what the CLI changes in the database reaches the service at once — a
 * rotated-out or revoked key is refused, the dashboard sessions signed in with it end, a deleted
 * account is gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliService, runCli, startCli } from './helpers/cli-process.js';

let dir: string;
let db: string;
let service: CliService | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-cli-accounts-'));
  db = `sqlite:${join(dir, 'accounts.db')}`;
});
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli([...args, '--db', db]);
const json = async (...args: string[]) => {
  const done = await cli(...args, '--json');
  expect(done.code, done.stderr).toBe(0);
  return JSON.parse(done.stdout);
};

describe('linkhooks-sender accounts', () => {
  it('lists, rotates, revokes and deletes, and the running service follows', async () => {
    const acme = await json('accounts', 'create', '--name', 'Acme', '--plan', 'business');
    const other = await json('accounts', 'create', '--name', 'Other', '--plan', 'business');
    const listed = await json('accounts', 'list');
    expect(listed.data.map((a: { id: string }) => a.id).sort()).toEqual([acme.id, other.id].sort());
    const keys = await cli('accounts', 'keys', '--id', acme.id);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain(acme.api_key.slice(0, 12));
    expect(keys.stdout).not.toContain(acme.api_key);

    service = startCli(['serve', '--db', db, '--port', '0'], { LINKHOOKS_LOG_LEVEL: 'info' });
    const base = (await service.logged((l) => typeof l.url === 'string', 'listening')).url as string;
    const status = async (key: string) =>
      (await fetch(`${base}/v1/endpoints`, { headers: { authorization: `Bearer ${key}` } })).status;
    const signIn = await fetch(`${base}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-linkhooks-csrf': '1' },
      body: JSON.stringify({ api_key: acme.api_key }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const session = async () => (await fetch(`${base}/v1/session`, { headers: { cookie } })).status;
    expect(await status(acme.api_key)).toBe(200);
    expect(await session()).toBe(200);

    const rotated = await json('accounts', 'rotate-key', '--id', acme.id, '--grace', '0');
    expect(rotated.api_key).toMatch(/^lhk_/);
    expect(rotated.previous).toMatchObject([{ status: 'expired' }]);
    expect(await status(acme.api_key)).toBe(401);
    expect(await session()).toBe(401);
    expect(await status(rotated.api_key)).toBe(200);

    const human = await cli('accounts', 'rotate-key', '--id', other.id);
    expect(human.stdout).toMatch(/shown once/);
    expect(human.stdout).toMatch(/works until/);
    expect(await status(other.api_key)).toBe(200); // an hour's grace by default

    const revoked = await json('accounts', 'revoke-key', '--id', acme.id, '--key', rotated.key.id);
    expect(revoked).toMatchObject({ id: rotated.key.id, status: 'revoked' });
    expect(await status(rotated.api_key)).toBe(401);

    const unconfirmed = await cli('accounts', 'delete', '--id', other.id);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/add --yes to confirm/);
    expect(await status(other.api_key)).toBe(200);
    const deleted = await json('accounts', 'delete', '--id', other.id, '--yes');
    expect(deleted).toMatchObject({ id: other.id, deleted: true });
    expect(await status(other.api_key)).toBe(401);
    const gone = await cli('accounts', 'keys', '--id', other.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(`no account ${other.id}`);
  });

  it('names what is wrong with a command, and exits 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['accounts', 'frobnicate'], /the subcommands are create, list, keys, rotate-key, revoke-key, delete/],
      [['accounts', 'keys'], /--id ACCOUNT is required/],
      [['accounts', 'revoke-key', '--id', 'acct_x'], /--key KEY_ID is required/],
      [['accounts', 'rotate-key', '--id', 'acct_x', '--grace', 'soon'], /--grace must be a whole number/],
      [['accounts', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
      [['accounts', 'list', '--cursor', 'garbage'], /--cursor must be the next_cursor of a page before/],
      [
        ['accounts', 'create', '--name', 'X', '--plan', 'gold'],
        /--plan must be one of free, pro, business, enterprise/,
      ],
      [['accounts', 'create', '--name', 'X'], /--plan is required: one of free, pro, business, enterprise/],
    ];
    for (const [args, message] of cases) {
      const done = await cli(...args);
      expect(done.code, args.join(' ')).toBe(2);
      expect(done.stderr).toMatch(message);
    }
  });
});

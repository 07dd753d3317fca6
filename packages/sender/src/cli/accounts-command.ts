/** Runs `linkhooks-sender accounts …` (design D37) through the engine, on the store of `--db`. */
import type { ApiKey } from '../engine/account-admin.js';
import { createSender, type Sender } from '../engine/sender.js';
import type { AccountsCommand } from './accounts-options.js';
import { maskDb, openStore } from './open-store.js';

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function keyJson(k: ApiKey) {
  return {
    id: k.id,
    prefix: k.prefix,
    status: k.status,
    created_at: iso(k.createdAt),
    last_used_at: k.lastUsedAt === null ? null : iso(k.lastUsedAt),
    expires_at: k.expiresAt === null ? null : iso(k.expiresAt),
    revoked_at: k.revokedAt === null ? null : iso(k.revokedAt),
  };
}

function keyLine(k: ApiKey): string {
  const ends = k.status === 'expiring' ? ` until ${iso(k.expiresAt)}` : '';
  return `  ${k.id}  ${(k.prefix ?? '(unknown)').padEnd(14)} ${k.status}${ends}  created ${iso(k.createdAt)}  last used ${iso(k.lastUsedAt)}\n`;
}

async function run(command: AccountsCommand, sender: Sender): Promise<string> {
  const out = (json: unknown, text: string) => (command.json ? `${JSON.stringify(json)}\n` : text);
  switch (command.kind) {
    case 'accounts-create': {
      const { account, apiKey } = await sender.createAccount({ name: command.name, plan: command.plan });
      return out(
        { id: account.id, api_key: apiKey },
        `Created account ${account.id} (${account.name}, plan ${account.plan}) in ${maskDb(command.db)}.\n` +
          `API key — shown once, store it now:\n  ${apiKey}\n`,
      );
    }
    case 'accounts-list': {
      const page = await sender.listAccounts({
        limit: command.limit,
        ...(command.cursor !== undefined ? { cursor: command.cursor } : {}),
      });
      const data = page.items.map((a) => ({
        id: a.id,
        name: a.name,
        plan: a.plan,
        created_at: iso(a.createdAt),
      }));
      const lines = data.map((a) => `${a.id}  ${a.plan.padEnd(10)} ${a.name}\n`).join('');
      const more = page.nextCursor ? `More: accounts list --cursor ${page.nextCursor}\n` : '';
      return out({ data, next_cursor: page.nextCursor }, (lines || 'No accounts.\n') + more);
    }
    case 'accounts-keys': {
      const keys = await sender.listApiKeys(command.id);
      return out({ data: keys.map(keyJson) }, `API keys of ${command.id}:\n${keys.map(keyLine).join('')}`);
    }
    case 'accounts-rotate-key': {
      const rotated = await sender.rotateApiKey(command.id, {
        ...(command.graceSeconds !== undefined ? { graceSeconds: command.graceSeconds } : {}),
      });
      const previous = rotated.previous
        .map(
          (k) =>
            `  ${k.id} ${k.status === 'expiring' ? `works until ${iso(k.expiresAt)}` : 'no longer works'}\n`,
        )
        .join('');
      return out(
        { api_key: rotated.apiKey, key: keyJson(rotated.key), previous: rotated.previous.map(keyJson) },
        `New API key ${rotated.key.id} for ${command.id} — shown once, store it now:\n  ${rotated.apiKey}\n` +
          (previous ? `The previous keys:\n${previous}` : ''),
      );
    }
    case 'accounts-revoke-key': {
      const key = await sender.revokeApiKey(command.id, command.key);
      return out(
        keyJson(key),
        `Revoked ${key.id} of ${command.id}: it and its dashboard sessions no longer work.\n`,
      );
    }
    case 'accounts-delete': {
      const { removed } = await sender.deleteAccount(command.id);
      return out(
        { id: command.id, deleted: true, removed },
        `Deleted account ${command.id}: its API keys no longer work; ${removed} rows removed.\n`,
      );
    }
  }
}

export async function runAccounts(command: AccountsCommand): Promise<void> {
  const store = await openStore(command.db);
  const sender = createSender({ store });
  try {
    process.stdout.write(await run(command, sender));
  } finally {
    await sender.stop(0);
    await store.close();
  }
}

/**
 * Dashboard sessions (design D22: the API key, or a portal link of design D54, is exchanged once
 * for an HttpOnly session cookie — never kept in a URL or in localStorage; SameSite=Strict unless
 * other sites may frame the dashboard, design D55). Sessions live in this process's memory: a
 * restart signs everyone out, which a dashboard can afford. State-changing requests made with the
 * cookie must carry `X-Linkhooks-CSRF: 1`: a custom header cannot be sent across sites without a
 * CORS preflight this service never grants, so another site cannot act with the cookie (auth.ts).
 */
import { randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'linkhooks_session';
export const CSRF_HEADER = 'x-linkhooks-csrf';
const DEFAULT_TTL_MS = 8 * 60 * 60 * 1000;

/** Sessions one account may hold; a new sign-in ends its oldest past this (design D22). */
export const SESSIONS_PER_ACCOUNT = 20;
/** Sessions the process holds in all; a new sign-in ends the oldest past this. */
export const MAX_SESSIONS = 10_000;

export interface SessionStore {
  /** `keyId`: the API key signed in with; the session stands only while that key works (design D37). */
  create(accountId: string, keyId?: string): { id: string; maxAgeSeconds: number };
  accountOf(id: string): string | null;
  /** The key the session signed in with, if it was kept. */
  keyOf?(id: string): string | null;
  delete(id: string): void;
}

export interface SessionStoreOptions {
  ttlMs?: number;
  now?: () => number;
  /** Default SESSIONS_PER_ACCOUNT. */
  perAccount?: number;
  /** Default MAX_SESSIONS. */
  max?: number;
}

/**
 * @example
 * const sessions = createSessionStore({ perAccount: 5 });
 * app.use(createManagementRouter({ sender, sessions }));
 */
export function createSessionStore(
  options: SessionStoreOptions = {},
): SessionStore & { /** Sessions held now. */ size(): number } {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const now = options.now ?? Date.now;
  const perAccount = options.perAccount ?? SESSIONS_PER_ACCOUNT;
  const max = options.max ?? MAX_SESSIONS;
  // Every session lives ttlMs, so the Map's insertion order is also expiry order: the expired ones
  // are at its front, and a sign-in drops them without looking at the live ones.
  const sessions = new Map<string, { accountId: string; keyId: string | null; expiresAt: number }>();
  const byAccount = new Map<string, Set<string>>(); // each Set in creation order too

  function remove(id: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    const ids = byAccount.get(session.accountId);
    ids?.delete(id);
    if (ids?.size === 0) byAccount.delete(session.accountId);
  }

  function dropExpired(at: number): void {
    for (const [id, session] of sessions) {
      if (session.expiresAt > at) break;
      remove(id);
    }
  }

  return {
    create(accountId, keyId) {
      const at = now();
      dropExpired(at);
      const own = byAccount.get(accountId);
      for (const oldest of own ?? []) {
        if (own!.size < perAccount) break;
        remove(oldest);
      }
      for (const oldest of sessions.keys()) {
        if (sessions.size < max) break;
        remove(oldest);
      }
      const id = randomBytes(32).toString('base64url');
      sessions.set(id, { accountId, keyId: keyId ?? null, expiresAt: at + ttlMs });
      byAccount.set(accountId, (byAccount.get(accountId) ?? new Set()).add(id));
      return { id, maxAgeSeconds: Math.floor(ttlMs / 1000) };
    },
    accountOf(id) {
      const session = sessions.get(id);
      if (!session) return null;
      if (session.expiresAt <= now()) {
        remove(id);
        return null;
      }
      return session.accountId;
    },
    keyOf(id) {
      return this.accountOf(id) === null ? null : sessions.get(id)!.keyId;
    },
    delete: remove,
    size: () => sessions.size,
  };
}

/** The session id in a Cookie header, if any. */
export function sessionIdOf(cookieHeader: string | undefined): string | null {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || null;
  }
  return null;
}

/** How the session cookie is set for one request. */
export interface CookiePolicy {
  /** The request came over TLS (design D28). */
  secure: boolean;
  /** Other sites may frame the dashboard (design D55): over TLS, the cookie must reach their frames. */
  embeddable: boolean;
}

/**
 * Strict by default. When other sites may frame the dashboard, over TLS it is `SameSite=None` (a
 * frame under another site sends no Strict cookie) and `Partitioned`: kept apart for each site the
 * dashboard is framed under, so no other site's page ever sends it (design D55).
 */
function cookieAttributes(maxAgeSeconds: number, { secure, embeddable }: CookiePolicy): string {
  if (secure && embeddable)
    return `HttpOnly; SameSite=None; Path=/; Max-Age=${maxAgeSeconds}; Secure; Partitioned`;
  return `HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function sessionCookie(id: string, maxAgeSeconds: number, policy: CookiePolicy): string {
  return `${SESSION_COOKIE}=${id}; ${cookieAttributes(maxAgeSeconds, policy)}`;
}

/** Same attributes as the cookie it clears: a partitioned cookie is replaced only by a partitioned one. */
export function clearedSessionCookie(policy: CookiePolicy): string {
  return `${SESSION_COOKIE}=; ${cookieAttributes(0, policy)}`;
}

/**
 * Dashboard sessions (design D22: the API key is exchanged once for an HttpOnly, SameSite=Strict
 * session cookie — never kept in a URL or in localStorage). Sessions live in this process's memory: a
 * restart signs everyone out, which a dashboard can afford. State-changing requests made with the
 * cookie must carry `X-Linkhooks-CSRF: 1`: a custom header cannot be sent across sites without a
 * CORS preflight this service never grants, so another site cannot act with the cookie.
 */
import { randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'linkhooks_session';
export const CSRF_HEADER = 'x-linkhooks-csrf';
const DEFAULT_TTL_MS = 8 * 60 * 60 * 1000;

export interface SessionStore {
  create(accountId: string): { id: string; maxAgeSeconds: number };
  accountOf(id: string): string | null;
  delete(id: string): void;
}

export function createSessionStore(options: { ttlMs?: number; now?: () => number } = {}): SessionStore {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, { accountId: string; expiresAt: number }>();
  return {
    create(accountId) {
      for (const [id, s] of sessions) if (s.expiresAt <= now()) sessions.delete(id);
      const id = randomBytes(32).toString('base64url');
      sessions.set(id, { accountId, expiresAt: now() + ttlMs });
      return { id, maxAgeSeconds: Math.floor(ttlMs / 1000) };
    },
    accountOf(id) {
      const session = sessions.get(id);
      if (!session) return null;
      if (session.expiresAt <= now()) {
        sessions.delete(id);
        return null;
      }
      return session.accountId;
    },
    delete(id) {
      sessions.delete(id);
    },
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

export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export const clearedSessionCookie = `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;

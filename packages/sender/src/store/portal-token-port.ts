/**
 * Portal links (design D54): one part of the store port (port.ts), kept in a file of its own. A link
 * is stored as the SHA-256 of its token; taking it deletes it, so it signs in once.
 */

export interface NewPortalToken {
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  hash: string;
  accountId: string;
  now: number;
  expiresAt: number;
}

/** A link as it was when taken: whose, and until when it was good. */
export interface TakenPortalToken {
  accountId: string;
  expiresAt: number;
}

export interface PortalTokens {
  /** Stores the link; false when the account does not exist or is being deleted. */
  createPortalToken(token: NewPortalToken): Promise<boolean>;
  /**
   * Deletes the link with this hash and answers what it was, in one statement: of several callers,
   * in this process or others, exactly one gets it. Null when there is none (unknown or used).
   */
  takePortalToken(hash: string): Promise<TakenPortalToken | null>;
  /** Deletes the links that expired at or before `now` unused; resolves with how many. */
  dropExpiredPortalTokens(now: number): Promise<number>;
}

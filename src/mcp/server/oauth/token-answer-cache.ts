import { createHash } from 'node:crypto';

/** The key a token is cached and looked up by: a SHA-256 of it, so no cache holds a token. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * What the authorization server said about tokens, keyed by `tokenDigest`, each answer kept until
 * its own deadline and at most `maxEntries` of them: past that, the oldest goes first. Expired
 * answers are dropped when met.
 */
export class TokenAnswerCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(private readonly maxEntries: number) {}

  /** How many answers are kept (expired ones not yet met included). */
  get size(): number {
    return this.entries.size;
  }

  /** The answer kept for `key`, unless it is past its deadline at `now`. */
  get(key: string, now: number): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps `value` until `until` (epoch milliseconds), dropping the oldest answers past the bound. */
  set(key: string, value: T, until: number): void {
    if (this.maxEntries <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, until });
  }
}

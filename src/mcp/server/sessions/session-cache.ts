import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';

/** One session held in memory. */
export interface CachedSession {
  /** The record as the store returned it (with the latest log level this process knows). */
  record: McpInboundSessionRecord;
  /** When the entry stops being served: the store read plus the cache TTL, whatever the use. */
  expiresAt: number;
  /** The last time this process served the session. */
  usedAt: number;
  /** The last time this process knew `lastSeenAt` to be fresh (the read, or its last touch). */
  touchedAt: number;
}

/** A store read in progress: a session forgotten meanwhile must not be cached from it. */
export interface SessionRead {
  readonly sessionId: string;
  /** When the read started: the entry it yields expires one TTL after this. */
  readonly startedAt: number;
  stale: boolean;
}

/**
 * Sessions by id in process memory: bounded (the least recently used entry goes first), each
 * entry served for `ttlMs` after the store read that produced it, found only with the principal
 * key it is bound to. The clock is injectable for tests.
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession>();
  private readonly reads = new Map<string, Set<SessionRead>>();
  /** The id last in `entries`' order (the most recently used), when known: a hit on it moves nothing. */
  private newestId: string | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries held now (expired ones are dropped lazily, and never beyond `maxEntries`). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The entry of `sessionId` when it is bound to `principalKey` (the stored key) and not
   * expired; it becomes the most recently used. Another principal's entry is left in place.
   */
  get(sessionId: string, principalKey: string): CachedSession | undefined {
    const entry = this.entries.get(sessionId);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(sessionId);
      return undefined;
    }
    if (entry.record.principalKey !== principalKey) return undefined;
    // Most recently used last; a client's run of requests moves its entry once, not every time.
    if (this.newestId !== sessionId) {
      this.entries.delete(sessionId);
      this.entries.set(sessionId, entry);
      this.newestId = sessionId;
    }
    return entry;
  }

  /** Marks the start of a store read of `sessionId`; give the ticket back to `put` or `settle`. */
  beginRead(sessionId: string): SessionRead {
    const read: SessionRead = { sessionId, startedAt: this.now(), stale: false };
    const pending = this.reads.get(sessionId) ?? new Set<SessionRead>();
    pending.add(read);
    this.reads.set(sessionId, pending);
    return read;
  }

  /** Ends a store read without caching anything (the session was not found, or the read failed). */
  settle(read: SessionRead): void {
    const pending = this.reads.get(read.sessionId);
    if (!pending) return;
    pending.delete(read);
    if (!pending.size) this.reads.delete(read.sessionId);
  }

  /**
   * Caches what a store read returned (or a session just opened, without `read`), unless the
   * session was forgotten while the read was in flight: the record may predate its end. Drops
   * the least recently used entries beyond the bound.
   */
  put(record: McpInboundSessionRecord, read?: SessionRead): void {
    const now = this.now();
    if (read) {
      this.settle(read);
      if (read.stale) return;
    }
    this.entries.delete(record.sessionId);
    this.entries.set(record.sessionId, {
      record,
      expiresAt: (read?.startedAt ?? now) + this.ttlMs,
      usedAt: now,
      touchedAt: record.lastSeenAt.getTime(),
    });
    this.newestId = record.sessionId;
    while (this.entries.size > this.maxEntries) this.remove(this.entries.keys().next().value as string);
    for (const [sessionId, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.remove(sessionId);
    }
  }

  private remove(sessionId: string): void {
    this.entries.delete(sessionId);
    if (this.newestId === sessionId) this.newestId = undefined;
  }

  /**
   * Drops the session (when `principalKey`, the stored key, is given: only if it is bound to
   * it), and spoils the reads of it in flight.
   */
  forget(sessionId: string, principalKey?: string): void {
    for (const read of this.reads.get(sessionId) ?? []) read.stale = true;
    const entry = this.entries.get(sessionId);
    if (entry && (principalKey === undefined || entry.record.principalKey === principalKey)) this.remove(sessionId);
  }

  /** Drops every entry and spoils every read in flight (messages about sessions may have been lost). */
  clear(): void {
    for (const pending of this.reads.values()) for (const read of pending) read.stale = true;
    this.entries.clear();
    this.newestId = undefined;
  }
}

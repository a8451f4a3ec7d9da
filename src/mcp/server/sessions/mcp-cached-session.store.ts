import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type {
  McpInboundSessionRecord,
  McpNewInboundSession,
  McpSessionStore,
} from '../../persistence/interfaces/mcp-session-store.interface';
import { InjectMcpSessionStore } from '../../persistence/mcp-persistence.constants';
import { storedPrincipalKey } from '../../persistence/new-records';
import { isSessionIdle, sessionTouchIntervalMs } from '../../persistence/session-liveness';
import type { McpLogLevel } from '../../protocol/log-levels';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpSessionBus } from './mcp-session-bus';
import { SessionCache, type CachedSession } from './session-cache';
import { SessionTouches } from './session-touches';

/** A failing store repeats the same error for every batch: log each text once per window. */
const LOG_WINDOW_MS = 10_000;

/**
 * The mount's sessions as the endpoint and the features see them: the bound `McpSessionStore`
 * (TypeORM or the host's) behind an in-process cache (`sessions.cache`). A session the store
 * found is served from memory until the cache TTL passes, so a request needs no database round
 * trip for its session; `lastSeenAt` is refreshed in batches, at most once per session per touch
 * interval. A DELETE, an idle expiry or a log level change on another replica drops the cached
 * copy over the session bus. Anything not served from memory goes to the store, so "not found"
 * stays the store's one answer for unknown, ended, idle and other principals' sessions.
 */
@Injectable()
export class McpCachedSessionStore implements McpSessionStore, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly cache: SessionCache | null;
  private readonly touches: SessionTouches;
  private readonly idleTtlMs: number;
  private readonly touchIntervalMs: number;
  private readonly unsubscribe: (() => void)[];
  private readonly logged = new Map<string, number>();

  constructor(
    @Inject(MCP_MODULE_OPTIONS) options: McpResolvedOptions,
    @InjectMcpSessionStore() private readonly store: McpSessionStore,
    private readonly bus: McpSessionBus,
  ) {
    this.logger = new Logger(`McpSessionCache:${options.mount}`);
    const settings = options.sessions.cache;
    this.cache = settings ? new SessionCache(settings.ttlMs, settings.maxEntries) : null;
    this.idleTtlMs = options.sessions.idleTtlMs;
    this.touchIntervalMs = sessionTouchIntervalMs(this.idleTtlMs);
    this.touches = new SessionTouches(store, {
      gone: (records) => records.forEach((record) => this.cache?.forget(record.sessionId)),
      failed: (records, error) => {
        // Until the store answers again, requests go to it (and fail fast) instead of running on a copy.
        records.forEach((record) => this.cache?.forget(record.sessionId));
        this.warnOnce(`Could not refresh the last use of sessions: ${(error as Error)?.message ?? error}`);
      },
    });
    this.unsubscribe = [
      bus.onSessionChange((sessionId, principalKey) =>
        this.cache?.forget(sessionId, principalKey === undefined ? undefined : storedPrincipalKey(principalKey)),
      ),
      // Ends sent while the bus was down never arrive: start over from the store.
      bus.onMessagesLost(() => this.cache?.clear()),
    ];
  }

  /** Entries held in memory now (0 when the cache is off). */
  get cachedSessions(): number {
    return this.cache?.size ?? 0;
  }

  /** @inheritdoc */
  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe.forEach((unsubscribe) => unsubscribe());
    await this.touches.idle();
  }

  /** Opens a session in the store and keeps it in memory: the client's next request finds it there. */
  async open(input: McpNewInboundSession): Promise<McpInboundSessionRecord> {
    const record = await this.store.open(input);
    this.cache?.put(record);
    return record;
  }

  /**
   * The session as `find` serves it from memory, without waiting: undefined when memory does not
   * hold it live (not cached, idle as far as this process saw, or the bus is down), and `find`
   * must ask the store. Queues the refresh of `lastSeenAt` as `find` does.
   */
  held(sessionId: string, principal: McpPrincipal): McpInboundSessionRecord | undefined {
    const cache = this.cache;
    if (!cache || !this.bus.listening) return undefined;
    return this.live(cache.get(sessionId, storedPrincipalKey(principal.key)), principal);
  }

  /**
   * The live session from memory when held (and not idle as far as this process saw), from the
   * store otherwise. Serving from memory queues a refresh of `lastSeenAt` once per touch interval.
   */
  async find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null> {
    const cache = this.cache;
    // While the bus is down, an end on another replica would not reach this one: ask the store.
    if (!cache || !this.bus.listening) return this.store.find(sessionId, principal);
    const entry = cache.get(sessionId, storedPrincipalKey(principal.key));
    const held = this.live(entry, principal);
    if (held) return held;
    // Idle as far as this process knows: only the store can tell (another replica may have used it).
    if (entry) cache.forget(sessionId);
    const read = cache.beginRead(sessionId);
    let record: McpInboundSessionRecord | null;
    try {
      record = await this.store.find(sessionId, principal);
    } catch (error) {
      cache.settle(read);
      throw error;
    }
    if (record) cache.put(record, read);
    else cache.settle(read);
    return record;
  }

  /** The cached session's record when it is not idle (noting this use), else undefined. */
  private live(entry: CachedSession | undefined, principal: McpPrincipal): McpInboundSessionRecord | undefined {
    const now = Date.now();
    if (!entry || isSessionIdle(new Date(entry.usedAt), this.idleTtlMs, now)) return undefined;
    entry.usedAt = now;
    if (now - entry.touchedAt >= this.touchIntervalMs) {
      entry.touchedAt = now;
      this.touches.add(entry.record, principal);
    }
    return entry.record;
  }

  /**
   * Stores the level, then drops the session from memory here and, over the bus, on the other
   * replicas: their next request reads the new level. Should the bus be down, they serve the old
   * level until their copy expires (the cache TTL); the level is stored either way.
   */
  async setLogLevel(sessionId: string, principal: McpPrincipal, level: McpLogLevel): Promise<void> {
    await this.store.setLogLevel(sessionId, principal, level);
    this.cache?.forget(sessionId);
    if (!this.cache) return;
    await this.bus
      .sessionChanged(sessionId)
      .catch((error) =>
        this.warnOnce(
          `Could not tell the other replicas about a log level change: ${(error as Error)?.message ?? error}`,
        ),
      );
  }

  /** Ends the session in the store and drops it from memory (the endpoint tells the other replicas). */
  async terminate(session: McpInboundSessionRecord): Promise<void> {
    this.cache?.forget(session.sessionId);
    await this.store.terminate(session);
    // Again after the write: a read that started before it must not cache the live record.
    this.cache?.forget(session.sessionId);
  }

  /** Counted by the store (in the database for the TypeORM store): the cap holds across replicas. */
  countOpen(principal: McpPrincipal): Promise<number> {
    return this.store.countOpen(principal);
  }

  private warnOnce(line: string): void {
    const now = Date.now();
    const last = this.logged.get(line);
    if (last !== undefined && now - last < LOG_WINDOW_MS) return;
    if (this.logged.size > 100) this.logged.clear();
    this.logged.set(line, now);
    this.logger.warn(line);
  }
}

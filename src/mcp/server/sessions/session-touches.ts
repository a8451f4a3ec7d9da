import type { McpPrincipal } from '../../interfaces/principal.interface';
import type {
  McpInboundSessionRecord,
  McpSessionStore,
} from '../../persistence/interfaces/mcp-session-store.interface';

/** Most sessions refreshed by one store call. */
const MAX_BATCH = 1000;

interface PendingTouch {
  record: McpInboundSessionRecord;
  principal: McpPrincipal;
}

/** What became of the sessions of one batch. */
export interface SessionTouchOutcome {
  /** Sessions the store no longer finds (ended or idle): drop them from the cache. */
  gone(records: McpInboundSessionRecord[]): void;
  /** The store failed: the cached copies can no longer be vouched for. */
  failed(records: McpInboundSessionRecord[], error: unknown): void;
}

/**
 * Refreshes `lastSeenAt` of sessions served from the cache, many per store call: touches that
 * come in while a batch is being written form the next batch, so one UPDATE covers every
 * session used meanwhile. Stores without `touch` get a `find` per session instead (which
 * refreshes it too, and tells whether it still lives). Nothing waits for a touch: a request
 * is not delayed by it.
 */
export class SessionTouches {
  private readonly pending = new Map<string, PendingTouch>();
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: McpSessionStore,
    private readonly outcome: SessionTouchOutcome,
  ) {}

  /** Queues a refresh of the session (once, however often it is queued before the next batch). */
  add(record: McpInboundSessionRecord, principal: McpPrincipal): void {
    this.pending.set(record.id, { record, principal });
    if (!this.running) this.running = this.drain();
  }

  /** Resolves once every queued touch was written (or failed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Let the requests that are already due queue their touches into the same batch.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.pending.size) {
        const batch = [...this.pending.values()].slice(0, MAX_BATCH);
        for (const touch of batch) this.pending.delete(touch.record.id);
        await this.write(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async write(batch: PendingTouch[]): Promise<void> {
    const records = batch.map((touch) => touch.record);
    try {
      if (this.store.touch) {
        await this.store.touch(records, new Date());
        return;
      }
      const found = await Promise.all(batch.map((touch) => this.store.find(touch.record.sessionId, touch.principal)));
      const gone = records.filter((_, i) => !found[i]);
      if (gone.length) this.outcome.gone(gone);
    } catch (error) {
      this.outcome.failed(records, error);
    }
  }
}

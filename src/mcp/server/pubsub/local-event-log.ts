import type { McpEventLog, McpEventLogBounds, McpLoggedEvent } from './mcp-event-log.interface';

/** The events of one stream, and when they expire. */
interface StreamEvents {
  events: McpLoggedEvent[];
  seq: number;
  expiresAt: number;
}

/** Streams whose events one process keeps at most (the oldest stream is dropped first). */
const MAX_STREAMS = 10_000;

/**
 * The event log in process memory (no Redis): resumption works on this replica only, which is
 * all a single replica needs. Bounded per stream (`maxEvents`), in time (`ttlMs`) and in the
 * number of streams; expired streams are dropped as new events arrive.
 */
export class McpLocalEventLog implements McpEventLog {
  private readonly streams = new Map<string, StreamEvents>();

  constructor(private readonly bounds: McpEventLogBounds) {}

  /** How many streams have events kept (for leak checks). */
  get size(): number {
    return this.streams.size;
  }

  /** @inheritdoc */
  async append(
    sessionId: string,
    streamId: string,
    data: string,
    options: { seq?: number; final?: boolean } = {},
  ): Promise<number> {
    const key = this.key(sessionId, streamId);
    const now = Date.now();
    this.sweep(now);
    const stream = this.live(key, now) ?? { events: [], seq: 0, expiresAt: 0 };
    const seq = options.seq ?? stream.seq + 1;
    stream.seq = Math.max(stream.seq, seq);
    stream.events.push({ seq, data, final: options.final === true });
    if (stream.events.length > this.bounds.maxEvents)
      stream.events.splice(0, stream.events.length - this.bounds.maxEvents);
    stream.expiresAt = now + this.bounds.ttlMs;
    // Re-inserted, so the map stays ordered by last write and the sweep stops at the first live one.
    this.streams.delete(key);
    this.streams.set(key, stream);
    if (this.streams.size > MAX_STREAMS) this.streams.delete(this.streams.keys().next().value as string);
    return seq;
  }

  /** @inheritdoc */
  async after(sessionId: string, streamId: string, after: number): Promise<McpLoggedEvent[]> {
    return (this.live(this.key(sessionId, streamId), Date.now())?.events ?? []).filter((event) => event.seq > after);
  }

  /** @inheritdoc */
  async lastSeq(sessionId: string, streamId: string): Promise<number> {
    return this.live(this.key(sessionId, streamId), Date.now())?.seq ?? 0;
  }

  /** @inheritdoc */
  async forget(sessionId: string, streamId: string): Promise<void> {
    this.streams.delete(this.key(sessionId, streamId));
  }

  private live(key: string, now: number): StreamEvents | undefined {
    const stream = this.streams.get(key);
    if (stream && stream.expiresAt <= now) {
      this.streams.delete(key);
      return undefined;
    }
    return stream;
  }

  private sweep(now: number): void {
    for (const [key, stream] of this.streams) {
      if (stream.expiresAt > now) return;
      this.streams.delete(key);
    }
  }

  private key(sessionId: string, streamId: string): string {
    return `${sessionId}\u0000${streamId}`;
  }
}

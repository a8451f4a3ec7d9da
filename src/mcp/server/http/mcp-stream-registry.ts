import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { McpSseWriter } from './mcp-sse-writer';

/** A session's open GET stream on this process. */
export interface McpOpenStream {
  writer: McpSseWriter;
  /** Ends the stream and lets go of what it holds (timer, claim). */
  close(): void;
}

/**
 * The standalone GET streams open on this process, one per session at most. Session-level
 * notifications are written here when the stream is local; the session bus brings them from
 * other replicas. All streams end when the app shuts down, so closing the server never waits on
 * a client that keeps listening.
 */
@Injectable()
export class McpStreamRegistry implements OnModuleDestroy {
  private readonly streams = new Map<string, McpOpenStream>();

  /** True when this process holds the session's stream. */
  has(sessionId: string): boolean {
    return this.streams.has(sessionId);
  }

  /** Records the session's stream; false when the session already has one here. */
  add(sessionId: string, stream: McpOpenStream): boolean {
    if (this.streams.has(sessionId)) return false;
    this.streams.set(sessionId, stream);
    return true;
  }

  /** Forgets the stream, if it is still the session's stream. */
  remove(sessionId: string, stream: McpOpenStream): void {
    if (this.streams.get(sessionId) === stream) this.streams.delete(sessionId);
  }

  /** Writes a serialized message on the session's stream; false when it has none here. */
  deliver(sessionId: string, json: string): boolean {
    const stream = this.streams.get(sessionId);
    return !!stream && stream.writer.send(json) !== null;
  }

  /** Ends the session's stream (the session was terminated). */
  end(sessionId: string): void {
    this.streams.get(sessionId)?.close();
  }

  /** @inheritdoc */
  onModuleDestroy(): void {
    for (const stream of [...this.streams.values()]) stream.close();
  }
}

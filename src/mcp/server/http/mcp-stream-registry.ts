import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { McpSseWriter } from './mcp-sse-writer';

/** A session's open GET stream on this process. */
export interface McpOpenStream {
  writer: McpSseWriter;
  /** Key of the principal that opened it (for `limits.streamsPerPrincipal`). */
  principalKey: string;
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
  private readonly perPrincipal = new Map<string, number>();

  /** True when this process holds the session's stream. */
  has(sessionId: string): boolean {
    return this.streams.has(sessionId);
  }

  /** Records the session's stream; false when the session already has one here. */
  add(sessionId: string, stream: McpOpenStream): boolean {
    if (this.streams.has(sessionId)) return false;
    this.streams.set(sessionId, stream);
    this.perPrincipal.set(stream.principalKey, this.countFor(stream.principalKey) + 1);
    return true;
  }

  /** Forgets the stream, if it is still the session's stream. */
  remove(sessionId: string, stream: McpOpenStream): void {
    if (this.streams.get(sessionId) !== stream) return;
    this.streams.delete(sessionId);
    const left = this.countFor(stream.principalKey) - 1;
    if (left > 0) this.perPrincipal.set(stream.principalKey, left);
    else this.perPrincipal.delete(stream.principalKey);
  }

  /** How many GET streams the principal holds on this process. */
  countFor(principalKey: string): number {
    return this.perPrincipal.get(principalKey) ?? 0;
  }

  /** Sizes of the maps, for leak checks: both return to zero once every stream closed. */
  get sizes(): { streams: number; principals: number } {
    return { streams: this.streams.size, principals: this.perPrincipal.size };
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

import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

/**
 * True when the Accept header names `text/event-stream`. Wildcards do not count: fetch sends
 * `*\/*` by default, and a client that never asked for a stream must not be handed one.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => part.split(';', 1)[0].trim().toLowerCase() === 'text/event-stream');
}

/** A fresh stream id: 12 URL-safe characters, the prefix of every event id on the stream. */
function newStreamId(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * Writes one Server-Sent Events stream: the head (no caching, no proxy buffering), a priming
 * event that carries an id and the reconnection delay, then one event per JSON-RPC message.
 * Event ids are `<stream id>_<sequence>`, unique within the session and telling which stream
 * they belong to.
 */
export class McpSseWriter {
  private sequence = 0;

  constructor(
    private readonly res: Response,
    /** The id of this stream. */
    readonly streamId: string = newStreamId(),
  ) {}

  /** True once the response has ended or its connection is gone. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  /** Sends the head and the priming event (an id, the retry delay, empty data). */
  open(retryMs: number, headers?: Record<string, string>): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...headers,
    });
    this.res.flushHeaders();
    this.res.write(`id: ${this.nextId()}\nretry: ${retryMs}\ndata: \n\n`);
  }

  /** Sends one serialized JSON-RPC message as an event; returns its id (null once closed). */
  send(json: string): string | null {
    if (this.closed) return null;
    const id = this.nextId();
    this.res.write(`id: ${id}\ndata: ${json}\n\n`);
    return id;
  }

  /** Sends an SSE comment (keeps idle connections and proxies from timing out). */
  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`);
  }

  /** Ends the stream. */
  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private nextId(): string {
    return `${this.streamId}_${this.sequence++}`;
  }
}

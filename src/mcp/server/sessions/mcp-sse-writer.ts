import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { memoizedHeaderTest } from '../pipeline/memoized-header-test';

/**
 * True when the Accept header names `text/event-stream`. Wildcards do not count: fetch sends
 * `*\/*` by default, and a client that never asked for a stream must not be handed one.
 */
export const acceptsEventStream: (accept: string | undefined) => boolean = memoizedHeaderTest((accept) =>
  accept.split(',').some((part) => part.split(';', 1)[0].trim().toLowerCase() === 'text/event-stream'),
);

/** A fresh stream id: 12 URL-safe characters, the prefix of every event id on the stream. */
function newStreamId(): string {
  return randomBytes(9).toString('base64url');
}

/** Settings of one SSE stream. */
export interface McpSseWriterOptions {
  /** The id of the stream, the prefix of its event ids. @default a fresh random id */
  streamId?: string;
  /**
   * Bytes that may wait in the socket buffer for a client that does not read; a write that finds
   * more closes the stream instead. @default no bound
   */
  maxBufferedBytes?: number;
  /** Called with every event sent by `send` (its sequence number), so it can be resumed later. */
  record?: (seq: number, json: string, final: boolean) => void;
}

/**
 * Writes one Server-Sent Events stream: the head (no caching, no proxy buffering), a priming
 * event that carries an id and the reconnection delay, then one event per JSON-RPC message.
 * Event ids are `<stream id>_<sequence>`, unique within the session and telling which stream
 * they belong to; a client reconnecting with `Last-Event-ID` resumes after that event (the
 * events are kept by the mount's event log).
 *
 * Backpressure: `res.write` returning false means the socket buffer is full. Node keeps queueing,
 * so a client that stops reading would make the process hold every later event; once more than
 * `maxBufferedBytes` wait, the stream is destroyed instead (the client may resume it).
 */
export class McpSseWriter {
  private sequence = 0;
  /** The id of this stream. */
  readonly streamId: string;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: McpSseWriterOptions = {},
  ) {
    this.streamId = options.streamId ?? newStreamId();
  }

  /** True once the response has ended or its connection is gone. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  /** Sends the head and the priming event (an id, the retry delay, empty data); later events are numbered from `primingSeq + 1`. */
  open(retryMs: number, headers?: Record<string, string>, primingSeq = 0): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      ...headers,
    });
    this.res.flushHeaders();
    this.sequence = primingSeq;
    this.write(`id: ${this.nextId()}\nretry: ${retryMs}\ndata: \n\n`);
  }

  /**
   * Sends one serialized JSON-RPC message as an event; returns its id (null once closed). The
   * event is recorded even when the connection is gone: the client may reconnect and ask for it.
   */
  send(json: string, final = false): string | null {
    if (this.closed && !this.options.record) return null;
    const seq = this.sequence;
    const id = this.nextId();
    this.options.record?.(seq, json, final);
    if (this.closed) return null;
    return this.write(`id: ${id}\ndata: ${json}\n\n`) ? id : null;
  }

  /** Sends an event whose sequence number was given elsewhere (the session log); null once closed. */
  sendAt(seq: number, json: string): string | null {
    if (this.closed) return null;
    const id = `${this.streamId}_${seq}`;
    return this.write(`id: ${id}\ndata: ${json}\n\n`) ? id : null;
  }

  /** Sends an SSE comment (keeps idle connections and proxies from timing out). */
  comment(text: string): void {
    if (!this.closed) this.write(`: ${text}\n\n`);
  }

  /** Ends the stream. */
  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private write(chunk: string): boolean {
    const max = this.options.maxBufferedBytes;
    if (max !== undefined && this.res.writableLength > max) {
      this.res.destroy();
      return false;
    }
    this.res.write(chunk);
    return true;
  }

  private nextId(): string {
    return `${this.streamId}_${this.sequence++}`;
  }
}

/** Splits an event id `<stream id>_<sequence>` (null when it is not one). */
export function parseEventId(id: string | undefined): { streamId: string; seq: number } | null {
  const match = id === undefined ? null : /^([A-Za-z0-9_-]{1,64})_(\d{1,15})$/.exec(id);
  return match ? { streamId: match[1], seq: Number(match[2]) } : null;
}

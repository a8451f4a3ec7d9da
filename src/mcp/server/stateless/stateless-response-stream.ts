import type { ServerResponse } from 'node:http';
import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import { sendJsonText } from '../responses/mcp-http-responses';

/**
 * The answer to one stateless request. It stays a plain JSON response unless the handler sends
 * a notification (progress, log) and the client accepts `text/event-stream`: then it becomes an
 * SSE stream scoped to the request, carrying the notifications and finally the response. No
 * event ids: the stateless revision has no resumable streams.
 */
export class StatelessResponseStream {
  private streaming = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly acceptsEventStream: boolean,
  ) {}

  /** True when notifications can reach the client on this response. */
  get canNotify(): boolean {
    return this.acceptsEventStream;
  }

  /** Sends a notification related to the request (opens the stream on the first one). */
  notify(notification: JsonRpcNotification): void {
    if (!this.acceptsEventStream || this.res.writableEnded || this.res.destroyed) return;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
      });
    }
    this.res.write(`event: message\ndata: ${JSON.stringify(notification)}\n\n`);
  }

  /**
   * Sends the final response (serialized) with its status and headers, or as the last event of
   * the stream (the headers are gone by then).
   */
  finish(status: number, json: string, headers?: Record<string, string>): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (!this.streaming) return sendJsonText(this.res, status, json, headers);
    this.res.end(`event: message\ndata: ${json}\n\n`);
  }

  /** The HTTP status the client actually sees for a given intended status. */
  effectiveStatus(status: number): number {
    return this.streaming ? 200 : status;
  }
}

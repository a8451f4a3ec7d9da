import type { ServerResponse } from 'node:http';
import type { McpClientChannel } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcId, JsonRpcNotification } from '../../protocol/jsonrpc';
import type { McpPendingClientRequests } from '../sessions/mcp-session-channel-pending';
import type { McpEventLog } from '../pubsub/mcp-event-log.interface';
import type { LazyAbort } from '../pipeline/lazy-abort';
import { McpSseWriter } from '../sessions/mcp-sse-writer';

/** What every channel of a mount shares. */
export interface McpSessionChannelSettings {
  pending: McpPendingClientRequests;
  /** Reconnection delay announced in the priming event. */
  retryMs: number;
  /** How long a server->client request waits for its answer. */
  clientRequestTimeoutMs: number;
  /** Bytes queued for a client that does not read before its stream is closed. */
  maxBufferedBytes: number;
  /** Where the stream's events are kept for a client that resumes it. */
  log: McpEventLog;
  /** Reports an event that could not be kept. */
  onLogError: (error: unknown) => void;
}

/**
 * The way back to the client while one POSTed request of a 2025 session is being handled. The
 * POST stays a plain JSON answer until something must travel before the response: then the
 * answer turns into an SSE stream carrying notifications (progress, log messages) and
 * server->client requests (elicitation, sampling, roots), and the response as the last event.
 * Answers to those requests come back as other POSTs, routed to `pending` (on any replica).
 */
export class McpSessionChannel implements McpClientChannel {
  private writer: McpSseWriter | null = null;
  /** Appends to the event log in order, one after the other (none until the stream opens). */
  private logged: Promise<unknown> | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly sessionId: string,
    private readonly callId: JsonRpcId,
    private readonly abort: LazyAbort,
    private readonly settings: McpSessionChannelSettings,
  ) {}

  /** True once the answer became an SSE stream. */
  get streaming(): boolean {
    return this.writer !== null;
  }

  /** Sends a notification related to the request, opening the stream if needed. */
  readonly notify = (notification: JsonRpcNotification): void => {
    this.write(JSON.stringify(notification));
  };

  /** @inheritdoc */
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { pending, clientRequestTimeoutMs } = this.settings;
    const id = pending.nextId();
    const answer = pending.wait(this.sessionId, id, method, this.callId, clientRequestTimeoutMs, this.abort.signal);
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answer;
  }

  /** Sends the response as the last event and ends the stream. */
  finish(json: string): void {
    this.writer?.send(json, true);
    this.writer?.end();
  }

  /** Ends the stream now (the session ended); the response, if it comes, is still logged. */
  close(): void {
    this.writer?.end();
  }

  private write(json: string): void {
    if (this.abort.aborted) return;
    if (!this.writer) {
      const { log, maxBufferedBytes, onLogError } = this.settings;
      this.writer = new McpSseWriter(this.res, {
        maxBufferedBytes,
        record: (seq, json, final) => {
          const streamId = this.writer!.streamId;
          this.logged = (this.logged ?? Promise.resolve())
            .then(() => log.append(this.sessionId, streamId, json, { seq, final }))
            .catch(onLogError);
        },
      });
      this.writer.open(this.settings.retryMs);
    }
    this.writer.send(json);
  }
}

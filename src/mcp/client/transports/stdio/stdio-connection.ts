import { McpRpcError } from '../../../errors/mcp-rpc.errors';
import type { McpClientError } from '../../../errors/mcp-client.errors';
import {
  classifyJsonRpc,
  JsonRpcErrorCode,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../../protocol/method-catalog';
import { encodeNdjson, type NdjsonLine } from '../../../protocol/ndjson';
import { abortReasonText } from '../../mcp-call-aborted.errors';
import type { McpHandshakeInfo, McpTransportContext } from '../mcp-transport.interface';
import { StdioDeadlineExceeded, type StdioDeadline } from './stdio-deadline';
import { stdioExitError, stdioProtocolError, stdioTimeoutError, type StdioPhase } from './stdio.errors';
import {
  buildCancelledNotification,
  buildInitializeRequest,
  INITIALIZED_NOTIFICATION,
  readInitializeResponse,
} from './stdio-handshake';
import { StdioProcess, type StdioExit, type StdioSpawnSpec } from './stdio-process';

/** A response read for an awaited request, with the line it came in. */
export interface StdioReply {
  response: JsonRpcResponse;
  raw: string;
}

interface Pending {
  id: JsonRpcId;
  phase: StdioPhase;
  delivered: boolean;
  resolve(reply: StdioReply): void;
  reject(error: McpClientError): void;
}

/**
 * A JSON-RPC peer over one server process: awaits one response at a time, drops answers to ids
 * nobody awaits, skips lines that are not messages, answers the server's requests and forwards
 * its notifications to the current call's context.
 */
export class StdioConnection {
  /** The process behind this connection. */
  readonly process: StdioProcess;
  /** Lines on stdout that were not JSON-RPC messages, over the life of the process. */
  invalidLines = 0;
  private pending: Pending | null = null;
  private context: McpTransportContext | null = null;
  private broken: McpClientError | null = null;
  private exitSeen: StdioExit | null = null;

  private readonly argv0: string;

  constructor(
    /** The configured server name, for messages. */
    readonly server: string,
    spec: StdioSpawnSpec,
  ) {
    this.argv0 = spec.argv[0];
    this.process = new StdioProcess(spec, {
      line: (line) => this.onLine(line),
      overflow: () =>
        this.fail(
          stdioProtocolError(
            this.server,
            `stdout carried a line longer than maxMessageChars (${spec.maxMessageChars} characters)`,
            this.pending?.delivered ?? false,
          ),
        ),
      closed: (exit) => this.onClosed(exit),
    });
  }

  /** True while the process runs and has not broken the protocol. */
  get usable(): boolean {
    return this.process.running && this.exitSeen === null && this.broken === null;
  }

  /** Sets (or clears) the context whose handlers serve the server's requests and notifications. */
  attach(context: McpTransportContext | null): void {
    this.context = context;
  }

  /** Runs the handshake: initialize, check the revision, notifications/initialized. */
  async initialize(
    capabilities: Record<string, unknown>,
    clientInfo: Record<string, unknown>,
    protocolVersion: string,
    deadline: StdioDeadline,
  ): Promise<McpHandshakeInfo> {
    const { response } = await this.request(
      buildInitializeRequest(capabilities, clientInfo, protocolVersion),
      'initialize',
      deadline,
    );
    const handshake = readInitializeResponse(response);
    if ('refused' in handshake) throw stdioProtocolError(this.server, handshake.refused, false);
    this.process.write(encodeNdjson(INITIALIZED_NOTIFICATION));
    return handshake;
  }

  /**
   * Writes `message` and waits for the response with its id. On timeout or abort after the line
   * was written, sends notifications/cancelled before rejecting with `McpTimeoutError`.
   */
  async request(
    message: JsonRpcRequest,
    phase: StdioPhase,
    deadline: StdioDeadline,
    line = encodeNdjson(message),
  ): Promise<StdioReply> {
    if (this.broken) throw this.broken;
    const pending = { id: message.id, phase, delivered: false } as Pending;
    const reply = new Promise<StdioReply>((resolve, reject) => Object.assign(pending, { resolve, reject }));
    this.pending = pending;
    try {
      if (!this.process.write(line)) {
        throw stdioExitError(this.server, this.argv0, this.exitSeen ?? (await this.process.exit), phase, false);
      }
      pending.delivered = phase === 'request';
      return await deadline.race(reply);
    } catch (error) {
      if (!(error instanceof StdioDeadlineExceeded)) throw error;
      if (pending.delivered) {
        const reason = error.aborted
          ? (abortReasonText(deadline.signal?.reason) ?? 'The client aborted the request')
          : `No response within ${deadline.timeoutMs} ms`;
        const notice = buildCancelledNotification(message, reason);
        const written = this.process.write(encodeNdjson(notice));
        try {
          this.context?.onCancelNotice?.(
            notice as unknown as JsonRpcNotification,
            written ? undefined : new Error('the server process no longer accepts input'),
          );
        } catch {
          // An observer cannot change the call's outcome.
        }
      }
      throw stdioTimeoutError(this.server, deadline.timeoutMs, phase, pending.delivered, error.aborted);
    } finally {
      if (this.pending === pending) this.pending = null;
    }
  }

  /** Writes a notification; false when the process no longer accepts input. */
  notify(message: JsonRpcNotification, line = encodeNdjson(message)): boolean {
    return this.process.write(line);
  }

  /** Ends the process (see `StdioProcess.shutdown`). */
  shutdown(closeGraceMs: number, killGraceMs: number): Promise<void> {
    return this.process.shutdown(closeGraceMs, killGraceMs);
  }

  private onLine(line: NdjsonLine): void {
    if (line.kind === 'invalid') {
      this.invalidLines++;
      return;
    }
    const classified = classifyJsonRpc(line.value);
    switch (classified.kind) {
      case 'response': {
        const pending = this.pending;
        if (pending !== null && classified.message.id === pending.id) {
          this.pending = null;
          pending.resolve({ response: classified.message, raw: line.raw });
        }
        return;
      }
      case 'request':
        void this.answer(classified.message);
        return;
      case 'notification':
        this.forward(classified.message);
        return;
      default:
        this.invalidLines++;
    }
  }

  private forward(notification: JsonRpcNotification): void {
    if (notification.method === McpMethod.Cancelled) return;
    try {
      this.context?.onNotification?.(notification, 'request');
    } catch {
      // A failing observer must not break the call it observes.
    }
  }

  private async answer(request: JsonRpcRequest): Promise<void> {
    const handler = this.context?.onServerRequest;
    let reply: JsonRpcResponse;
    // `ping` is answered here; only the requests that need a client capability (roots, sampling,
    // elicitation) reach `onServerRequest`, so a generic handler is never asked a method it was
    // not written for: anything else gets -32601.
    if (request.method === McpMethod.Ping) {
      reply = jsonRpcResult(request.id, {});
    } else if (!handler || !CLIENT_CAPABILITY_OF_REQUEST.has(request.method)) {
      reply = jsonRpcError(request.id, JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    } else {
      try {
        const result: unknown = await handler(request);
        reply =
          typeof result === 'object' && result !== null && !Array.isArray(result)
            ? jsonRpcResult(request.id, result as Record<string, unknown>)
            : jsonRpcError(
                request.id,
                JsonRpcErrorCode.InternalError,
                `Internal error: no result for ${request.method}`,
              );
      } catch (error) {
        reply =
          error instanceof McpRpcError
            ? { jsonrpc: '2.0', id: request.id, error: error.toJsonRpc() }
            : jsonRpcError(
                request.id,
                JsonRpcErrorCode.InternalError,
                `Internal error while handling ${request.method}`,
              );
      }
    }
    this.process.write(encodeNdjson(reply));
  }

  private fail(error: McpClientError): void {
    this.broken ??= error;
    const pending = this.pending;
    this.pending = null;
    pending?.reject(error);
  }

  private onClosed(exit: StdioExit): void {
    this.exitSeen = exit;
    const pending = this.pending;
    if (pending) this.fail(stdioExitError(this.server, this.argv0, exit, pending.phase, pending.delivered));
  }
}

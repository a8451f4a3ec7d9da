import { McpProtocolError } from '../../../errors/mcp-client.errors';
import {
  parseJsonRpc,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../protocol/jsonrpc';
import { McpHeader } from '../../../protocol/mcp-methods';
import type { HttpCall } from './http-call';
import { RawRecorder } from './raw-recorder';
import { HttpServerMessages } from './http-server-messages';
import { isEventStream, readSseResponse } from './http-sse-reader';
import { toSendFailure, type HttpSession, type HttpWire } from './http-wire';

/** How one POST of a message ended, when an HTTP response arrived. */
export type HttpExchangeOutcome =
  /** The JSON-RPC response to our request (a success or a JSON-RPC error). */
  | { kind: 'response'; status: number; body: JsonRpcResponse; raw: string; sessionId: string | null }
  /** A notification (or response) the server took, normally with 202. */
  | { kind: 'accepted'; status: number; raw: string | null; sessionId: string | null }
  /** An HTTP error status that carries no JSON-RPC answer to our request. */
  | {
      kind: 'http-error';
      status: number;
      raw: string;
      detail: string | null;
      /** The bearer token the refused request carried, and the server's `WWW-Authenticate`. */
      bearer?: string | null;
      challenge?: string | null;
    };

/** What one exchange needs. */
export interface HttpExchangeContext {
  wire: HttpWire;
  call: HttpCall;
  maxRawResponseLength: number;
  maxStreamResumptions: number;
  /** Largest body read, in bytes. */
  maxResponseBytes: number;
  /** Largest SSE event, in characters. */
  maxEventChars: number;
  /**
   * Routing headers of a stateless request. Their presence also lets a 404 that carries the
   * JSON-RPC answer (a stateless server's -32601) through as a response.
   */
  statelessHeaders?: Record<string, string>;
}

/** Statuses that are about the transport (auth, session, load), never a JSON-RPC answer. */
const TRANSPORT_STATUSES = new Set([401, 403, 404, 405, 406, 415, 429]);

/**
 * Reads a body as text, at most `maxBytes` of it: chunk by chunk, so a huge (or endless) body
 * costs no more than the limit. Past it, `cut` returns what was read so far (an error body only
 * needs its start); otherwise the read fails with `McpProtocolError`. The rest is never read.
 */
async function readBody(response: Response, ctx: HttpExchangeContext, cut: boolean): Promise<string> {
  const { call, maxResponseBytes: maxBytes } = ctx;
  if (!response.body) return '';
  const tooLarge = () =>
    new McpProtocolError(
      `MCP server "${call.context.server}" sent a response body larger than maxResponseBytes (${maxBytes} bytes)`,
      call.maybeDelivered,
    );
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (!cut && Number.isFinite(declared) && declared > maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let size = 0;
  try {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch (error) {
        throw call.signal.aborted ? error : toSendFailure(error, true);
      }
      if (chunk.done || !chunk.value) break;
      const room = maxBytes - size;
      size += chunk.value.byteLength;
      if (size > maxBytes) {
        if (!cut) throw tooLarge();
        parts.push(decoder.decode(chunk.value.subarray(0, room)));
        return parts.join('');
      }
      parts.push(decoder.decode(chunk.value, { stream: true }));
    }
    parts.push(decoder.decode());
    return parts.join('');
  } finally {
    // Stops the download of what was not read; a no-op once the body was read to its end.
    reader.cancel().catch(() => undefined);
  }
}

function errorDetail(text: string): string | null {
  const parsed = parseJsonRpc(text);
  if (parsed.kind === 'response' && 'error' in parsed.message) return parsed.message.error.message;
  return text.trim() ? text : null;
}

function parseAnswer(text: string, request: JsonRpcRequest, server: string): JsonRpcResponse {
  const parsed = parseJsonRpc(text);
  if (parsed.kind === 'response' && parsed.message.id === request.id) return parsed.message;
  const what =
    parsed.kind === 'invalid' && parsed.error.error.code === -32700
      ? 'a body that is not valid JSON'
      : 'a body that is not the JSON-RPC response to it';
  throw new McpProtocolError(
    `MCP server "${server}" answered request ${JSON.stringify(request.id)} (${request.method}) with ${what}`,
    true,
  );
}

/**
 * POSTs one message in `session` and reads the answer: a JSON body, an SSE stream (server
 * requests and notifications on it are handled on the way), 202 for a notification, or an
 * HTTP error. Network failures reject with `HttpSendFailure`; a broken answer with
 * `McpProtocolError`.
 */
export async function exchangeMessage(
  message: JsonRpcRequest | JsonRpcNotification,
  session: HttpSession | null,
  ctx: HttpExchangeContext,
): Promise<HttpExchangeOutcome> {
  const { wire, call } = ctx;
  const bearer = await wire.bearer(call.context);
  const response = await wire.send({
    method: 'POST',
    session,
    signal: call.signal,
    body: JSON.stringify(message),
    extraHeaders: ctx.statelessHeaders,
    bearer,
  });
  const status = response.status;
  const sessionId = response.headers.get(McpHeader.SessionId);
  const redact = (text: string) => wire.secrets.redact(text);
  const recorder = new RawRecorder(ctx.maxRawResponseLength);
  const request = 'id' in message ? message : null;

  if (response.ok && request && isEventStream(response)) {
    const messages = new HttpServerMessages(wire, call, session);
    const body = await readSseResponse(response, request, {
      wire,
      call,
      session,
      messages,
      recorder,
      maxResumptions: ctx.maxStreamResumptions,
      maxEventChars: ctx.maxEventChars,
    });
    await messages.settle();
    return { kind: 'response', status, body, raw: redact(recorder.text()), sessionId };
  }

  if (response.ok && request) {
    const type = response.headers.get('content-type') ?? '';
    if (status === 202 || !type.toLowerCase().includes('json')) {
      // Not an answer: its body (an HTML page, say, of any size) is not read at all.
      await response.body?.cancel().catch(() => undefined);
      const got = status === 202 ? '202 Accepted' : `Content-Type "${type}"`;
      throw new McpProtocolError(
        `MCP server "${call.context.server}" answered request ${JSON.stringify(request.id)} (${request.method}) with ${got}; expected JSON or an event stream`,
        true,
      );
    }
    const text = await readBody(response, ctx, false);
    recorder.append(text);
    return {
      kind: 'response',
      status,
      body: parseAnswer(text, request, call.context.server),
      raw: redact(recorder.text()),
      sessionId,
    };
  }
  const text = await readBody(response, ctx, !response.ok);
  recorder.append(text);
  const raw = redact(recorder.text());
  if (response.ok && !request) return { kind: 'accepted', status, raw: text ? raw : null, sessionId };
  const answersInBody = !TRANSPORT_STATUSES.has(status) || (ctx.statelessHeaders !== undefined && status === 404);
  if (request && answersInBody && status < 500) {
    const parsed = parseJsonRpc(text);
    if (parsed.kind === 'response' && parsed.message.id === request.id)
      return { kind: 'response', status, body: parsed.message, raw, sessionId };
  }
  const detail = errorDetail(text);
  return {
    kind: 'http-error',
    status,
    raw,
    detail: detail === null ? null : redact(detail),
    bearer,
    challenge: response.headers.get('www-authenticate'),
  };
}

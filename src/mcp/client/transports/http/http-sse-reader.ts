import { McpProtocolError, McpTransportError } from '../../../errors/mcp-client.errors';
import { classifyJsonRpc, type JsonRpcRequest, type JsonRpcResponse } from '../../../protocol/jsonrpc';
import { MAX_JSON_RPC_DEPTH, jsonNestsDeeperThan } from '../../../protocol/json-depth';
import { SseEventTooLargeError, SseParser, type SseEvent } from '../../../protocol/sse';
import { abortableDelay } from './http-delivery-policy';
import type { HttpCall } from './http-call';
import type { RawRecorder } from './raw-recorder';
import type { HttpServerMessages } from './http-server-messages';
import { toSendFailure, type HttpSession, type HttpWire } from './http-wire';

/** Reconnection delay when the server did not send a `retry` field, in ms. */
const DEFAULT_RESUME_DELAY_MS = 1000;

/** What reading a POST's SSE stream needs. */
export interface SseReadContext {
  wire: HttpWire;
  call: HttpCall;
  session: HttpSession | null;
  messages: HttpServerMessages;
  recorder: RawRecorder;
  maxResumptions: number;
  /** Largest event, in characters (see `HttpTransportOptions.maxEventChars`). */
  maxEventChars: number;
}

/** True when the response carries an event stream. */
export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

/**
 * Reads the SSE stream of a POST until the response to `request` arrives, handing every other
 * message to `messages`. A stream that ends early is resumed with GET + `Last-Event-ID` when
 * the server gave event ids, after the delay it asked for.
 */
export async function readSseResponse(
  first: Response,
  request: JsonRpcRequest,
  ctx: SseReadContext,
): Promise<JsonRpcResponse> {
  let response = first;
  let parser = new SseParser({ maxEventChars: ctx.maxEventChars });
  for (let resumptions = 0; ; resumptions++) {
    const found = await readStream(response, parser, request, ctx);
    if (found) return found;
    const server = ctx.call.context.server;
    if (!parser.lastEventId || resumptions >= ctx.maxResumptions) {
      throw new McpTransportError(
        `MCP server "${server}" closed the event stream before answering request ${JSON.stringify(request.id)} (${request.method})`,
        true,
      );
    }
    await abortableDelay(parser.retryMs ?? DEFAULT_RESUME_DELAY_MS, ctx.call.signal);
    response = await resume(parser.lastEventId, ctx);
    const next = new SseParser({ maxEventChars: ctx.maxEventChars });
    next.lastEventId = parser.lastEventId;
    next.retryMs = parser.retryMs;
    parser = next;
  }
}

async function resume(lastEventId: string, ctx: SseReadContext): Promise<Response> {
  let response: Response;
  try {
    response = await ctx.wire.send({ method: 'GET', session: ctx.session, signal: ctx.call.signal, lastEventId });
  } catch (error) {
    // The message itself was sent with the POST: nothing about this GET makes it undelivered.
    throw ctx.call.signal.aborted ? error : toSendFailure(error, true);
  }
  if (!response.ok || !isEventStream(response)) {
    await response.body?.cancel().catch(() => undefined);
    const server = ctx.call.context.server;
    throw new McpTransportError(
      `MCP server "${server}" refused to resume the event stream (GET with Last-Event-ID): HTTP ${response.status}`,
      true,
      response.status,
    );
  }
  return response;
}

async function readStream(
  response: Response,
  parser: SseParser,
  request: JsonRpcRequest,
  ctx: SseReadContext,
): Promise<JsonRpcResponse | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch (error) {
        throw ctx.call.signal.aborted ? error : toSendFailure(error, true);
      }
      const text = chunk.done || !chunk.value ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      if (text) ctx.recorder.append(text);
      let events: SseEvent[];
      try {
        events = parser.push(text);
      } catch (error) {
        if (!(error instanceof SseEventTooLargeError)) throw error;
        const server = ctx.call.context.server;
        throw new McpProtocolError(
          `MCP server "${server}" sent an event longer than maxEventChars (${error.maxEventChars} characters) on the stream of request ${JSON.stringify(request.id)}`,
          true,
        );
      }
      for (const event of events) {
        const answer = dispatch(event, request, ctx);
        if (answer) return answer;
      }
      if (chunk.done) return null;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

function dispatch(event: SseEvent, request: JsonRpcRequest, ctx: SseReadContext): JsonRpcResponse | null {
  if (event.type !== 'message' || event.data.trim() === '') return null;
  if (jsonNestsDeeperThan(event.data, MAX_JSON_RPC_DEPTH)) {
    throw new McpProtocolError(
      `MCP server "${ctx.call.context.server}" sent an event nested deeper than ${MAX_JSON_RPC_DEPTH} levels on the stream of request ${JSON.stringify(request.id)}`,
      true,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    throw new McpProtocolError(
      `MCP server "${ctx.call.context.server}" sent an event that is not valid JSON on the stream of request ${JSON.stringify(request.id)}`,
      true,
    );
  }
  const message = classifyJsonRpc(value);
  if (message.kind === 'response') return message.message.id === request.id ? message.message : null;
  if (message.kind === 'request') ctx.messages.answer(message.message);
  else if (message.kind === 'notification') ctx.messages.notify(message.message);
  return null;
}

import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import type { McpCallServerRequest, McpCallServerRequestHandler } from '../interfaces/mcp-call.interface';
import type { BullCallChannels } from './bull-call-channels';

/** A server request of a call, as the worker publishes it to the caller. */
interface RelayedRequest extends McpCallServerRequest {
  /** Pairs the answer with its request (the JSON-RPC id stays with the worker). */
  rid: string;
}

/** The caller's answer to one relayed request: its result, or its JSON-RPC error. */
type RelayedAnswer =
  | { rid: string; result: Record<string, unknown> }
  | { rid: string; error: { code: number; message: string; data?: unknown } };

/**
 * The caller's side of the relay of one Bull call: marks the call as answered by this process
 * (a key that expires with the call's deadline), listens on the call's requests channel before
 * the job exists, and publishes each answer of `handler` (its result, or its error with the
 * error's JSON-RPC code; -32603 for any other failure) on the answers channel. A request that
 * comes again (the same `rid`) is not handled again. Resolves to the function that stops it,
 * which resolves once Redis confirmed.
 */
export async function answerCallRequests(
  client: Redis,
  channels: BullCallChannels,
  id: string,
  ttlMs: number,
  handler: McpCallServerRequestHandler,
  signal?: AbortSignal,
): Promise<() => Promise<void>> {
  const reply = (answer: RelayedAnswer) =>
    void client.publish(channels.answersChannel(id), JSON.stringify(answer)).catch(() => undefined);
  // A request comes twice when ioredis sent the worker's PUBLISH again after its reply was lost
  // with the connection: the handler (a model's sampling, a person's answer) runs once per request.
  const seen = new Set<string>();
  const unsubscribe = await channels.subscribe(channels.requestsChannel(id), (message) => {
    const { rid, method, params } = JSON.parse(message) as RelayedRequest;
    if (seen.has(rid)) return;
    seen.add(rid);
    void Promise.resolve()
      .then(() => handler({ method, params: params ?? {} }, signal ? { signal } : {}))
      .then(
        (result) => reply({ rid, result: result ?? {} }),
        (error: unknown) => reply({ rid, error: rpcErrorOf(error) }),
      );
  });
  try {
    await client.set(channels.answererKey(id), String(process.pid), 'PX', Math.max(1, Math.ceil(ttlMs)));
  } catch (error) {
    await unsubscribe().catch(() => undefined);
    throw error;
  }
  return async () => {
    await client.del(channels.answererKey(id)).catch(() => undefined);
    await unsubscribe();
  };
}

/**
 * The worker's side of the relay of one Bull call: `answer` sends a server request of the call to
 * the process that holds its caller and resolves to the caller's result, or rejects with the
 * caller's `McpRpcError`. Bounded: a caller that is gone (its mark is absent) gets -32603 at once,
 * and one that does not answer by the call's deadline (or before the request's signal fires) gets
 * -32603 then, so the server is never left waiting.
 */
export class BullCallRequestRelay {
  private readonly pending = new Map<string, (answer: RelayedAnswer) => void>();
  private listening?: Promise<() => Promise<void>>;

  constructor(
    private readonly client: Redis,
    private readonly channels: BullCallChannels,
    private readonly id: string,
    /** When the caller's answers stop being awaited, as `Date.now()` ms. */
    private readonly deadlineAt: number,
  ) {}

  /** Pass as the attempt's `answer`. */
  readonly answer: McpCallServerRequestHandler = async (request, { signal } = {}) => {
    if (!this.listening) {
      const subscribing = this.channels.subscribe(this.channels.answersChannel(this.id), (message) => {
        const answer = JSON.parse(message) as RelayedAnswer;
        this.pending.get(answer.rid)?.(answer);
      });
      this.listening = subscribing;
      subscribing.catch(() => (this.listening = undefined));
    }
    await this.listening;
    if ((await this.client.exists(this.channels.answererKey(this.id))) === 0) {
      throw new McpRpcError(
        JsonRpcErrorCode.InternalError,
        `The caller of this call is gone: nobody answers ${request.method}`,
      );
    }
    const rid = randomUUID();
    const ms = Math.max(0, this.deadlineAt - Date.now());
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const answer = await new Promise<RelayedAnswer>((resolve, reject) => {
        this.pending.set(rid, resolve);
        const stop = (why: string) =>
          reject(
            new McpRpcError(JsonRpcErrorCode.InternalError, `The caller did not answer ${request.method}: ${why}`),
          );
        timer = setTimeout(() => stop(`no answer within the call's deadline`), ms);
        timer.unref?.();
        onAbort = () => stop('the request was cancelled');
        if (signal?.aborted) onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        const message: RelayedRequest = { rid, method: request.method, params: request.params };
        this.client
          .publish(this.channels.requestsChannel(this.id), JSON.stringify(message))
          .catch((error: Error) =>
            reject(
              new McpRpcError(JsonRpcErrorCode.InternalError, `Relaying ${request.method} failed: ${error.message}`),
            ),
          );
      });
      if ('error' in answer) throw new McpRpcError(answer.error.code, answer.error.message, answer.error.data);
      return answer.result;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      this.pending.delete(rid);
    }
  };

  /** Stops listening for answers (once the call is over). */
  async close(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    if (listening) await (await listening.catch(() => null))?.().catch(() => undefined);
  }
}

/** The JSON-RPC error an answerer's failure becomes: an `McpRpcError` keeps its code and data. */
function rpcErrorOf(error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof McpRpcError)
    return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  return { code: JsonRpcErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) };
}

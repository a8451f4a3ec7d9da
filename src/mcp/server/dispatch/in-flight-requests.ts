import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { createHandlerContext } from '../pipeline/handler-context.factory';
import { LazyAbort, abortSourceOf } from '../pipeline/lazy-abort';

/**
 * The requests of one mount whose handlers run now, by session and request id: what
 * `notifications/cancelled` aborts.
 */
export class InFlightRequests {
  private readonly running = new Map<string, LazyAbort>();

  constructor(private readonly mount: string) {}

  /** How many requests run handlers now (for leak checks). */
  get size(): number {
    return this.running.size;
  }

  /**
   * Runs `work` as the handling of `request`, with a handler context whose signal aborts on
   * `cancel` for this request or when the caller's signal aborts; the context ends with the work.
   * The handler's abort source is a child of the caller's (`withAbortSource`), or follows the
   * caller's plain signal: no signal is made unless someone reads one.
   */
  async run<T>(
    request: JsonRpcRequest,
    context: McpDeliveryContext,
    work: (handlerContext: McpToolContext) => Promise<T>,
  ): Promise<T> {
    const key = keyOf(context.sessionId, request.id);
    const outer = abortSourceOf(context);
    const abort = outer ? outer.child() : LazyAbort.follow(context.signal);
    this.running.set(key, abort);
    const handlerContext = createHandlerContext(this.mount, request, context, abort);
    try {
      return await work(handlerContext);
    } finally {
      handlerContext.end();
      // Two requests may share a key (same id on two stateless callers): remove only our own entry.
      if (this.running.get(key) === abort) this.running.delete(key);
      abort.dispose();
    }
  }

  /** Aborts the handler of `requestId` in `sessionId`, if one runs, with `reason`. */
  cancel(sessionId: string | null, requestId: string | number, reason: string): void {
    this.running.get(keyOf(sessionId, requestId))?.abort(new Error(reason));
  }
}

function keyOf(sessionId: string | null, requestId: string | number): string {
  return `${sessionId ?? ''}\u0000${typeof requestId}:${requestId}`;
}

import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { InFlightSet } from '../../in-flight-set';
import { createHandlerContext } from '../pipeline/handler-context.factory';
import { LazyAbort, abortSourceOf } from '../pipeline/lazy-abort';

/** A request whose handler runs now: what `cancel` looks for. */
interface RunningRequest {
  readonly sessionId: string | null;
  readonly requestId: string | number;
  /** Higher for a request registered later. */
  readonly order: number;
  readonly abort: LazyAbort;
}

/**
 * The requests of one mount whose handlers run now, by session and request id: what
 * `notifications/cancelled` aborts. They are kept in an `InFlightSet` (a request joins and leaves
 * it on every call) and found by a walk: a cancellation is rare, a call is not.
 */
export class InFlightRequests {
  private readonly running = new InFlightSet<RunningRequest>();
  private registered = 0;

  constructor(private readonly mount: string) {}

  /** How many requests run handlers now (for leak checks). */
  get size(): number {
    return this.running.size;
  }

  /**
   * Runs `work` as the handling of `request`, with a handler context whose signal aborts on
   * `cancel` for this request or when the caller's signal aborts; the context ends with the work.
   * The handler's abort source is a child of the caller's (a `SourcedDelivery`), or follows the
   * caller's plain signal: no signal is made unless someone reads one.
   */
  async run<T>(
    request: JsonRpcRequest,
    context: McpDeliveryContext,
    work: (handlerContext: McpToolContext) => Promise<T>,
  ): Promise<T> {
    const outer = abortSourceOf(context);
    const abort = outer ? outer.child() : LazyAbort.follow(context.signal);
    const running: RunningRequest = {
      sessionId: context.sessionId,
      requestId: request.id,
      order: ++this.registered,
      abort,
    };
    this.running.add(running);
    const handlerContext = createHandlerContext(this.mount, request, context, abort);
    try {
      return await work(handlerContext);
    } finally {
      handlerContext.end();
      this.running.delete(running);
      abort.dispose();
    }
  }

  /**
   * Aborts the handler of `requestId` in `sessionId`, if one runs, with `reason`. Two requests may
   * share the id (the same id from two stateless callers): the one registered last is aborted.
   */
  cancel(sessionId: string | null, requestId: string | number, reason: string): void {
    let target: RunningRequest | undefined;
    for (const running of this.running) {
      if ((running.sessionId ?? '') !== (sessionId ?? '') || running.requestId !== requestId) continue;
      if (!target || running.order > target.order) target = running;
    }
    target?.abort.abort(new Error(reason));
  }
}

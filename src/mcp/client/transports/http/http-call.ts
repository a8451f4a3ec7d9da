import { McpTimeoutError, McpTransportError, type McpClientError } from '../../../errors/mcp-client.errors';
import { abortReasonText } from '../../mcp-call-aborted.errors';
import type { McpTransportContext } from '../mcp-transport.interface';
import type { HttpSession } from './http-wire';

/** Why a call stopped before its answer arrived. */
type HttpCallStop = { kind: 'timeout' } | { kind: 'signal' } | { kind: 'failed'; error: McpClientError };

/**
 * The state of one `deliver`: one abort signal for every request it makes (fired by the
 * deadline, by the caller's signal, or by a failure that must stop the call), and what is known
 * about whether the message may have reached the server.
 */
export class HttpCall {
  /** True once a POST of the message itself was started (the handshake does not count). */
  maybeDelivered = false;
  /** The session the message was last sent in: where `notifications/cancelled` must go. */
  session: HttpSession | null = null;

  private readonly controller = new AbortController();
  private stop: HttpCallStop | null = null;
  private readonly timer: NodeJS.Timeout | null;
  private readonly onCallerAbort = () => this.halt({ kind: 'signal' });

  constructor(readonly context: McpTransportContext) {
    const { timeoutMs, signal, deadlineAt } = context;
    // The caller's absolute deadline (over every attempt of the call) may come before timeoutMs.
    const own = Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : Infinity;
    const left =
      typeof deadlineAt === 'number' && Number.isFinite(deadlineAt) ? Math.max(0, deadlineAt - Date.now()) : Infinity;
    const wait = Math.min(own, left);
    this.timer = Number.isFinite(wait) ? setTimeout(() => this.halt({ kind: 'timeout' }), wait) : null;
    if (signal?.aborted) this.halt({ kind: 'signal' });
    else signal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** Aborts every request of the call. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the call was stopped (deadline, caller's signal, or a failure). */
  get stopped(): boolean {
    return this.stop !== null;
  }

  /** Stops the call with `error`: what `deliver` will reject with. */
  fail(error: McpClientError): void {
    this.halt({ kind: 'failed', error });
  }

  /** The typed error for a stopped call. */
  stopError(): McpClientError {
    const server = this.context.server;
    const stop = this.stop ?? { kind: 'signal' };
    if (stop.kind === 'failed') return stop.error;
    if (stop.kind === 'timeout') {
      const timeoutMs = this.context.timeoutMs;
      const where = this.maybeDelivered ? 'did not answer' : 'could not be reached';
      return new McpTimeoutError(
        `MCP server "${server}" ${where} within ${timeoutMs} ms`,
        this.maybeDelivered,
        timeoutMs,
      );
    }
    return new McpTransportError(`The call to MCP server "${server}" was aborted by the caller`, this.maybeDelivered);
  }

  /** A short reason for `notifications/cancelled`. */
  cancelReason(): string {
    if (this.stop?.kind === 'timeout') return `Timed out after ${this.context.timeoutMs} ms`;
    if (this.stop?.kind === 'failed') return 'The client could not continue the request';
    return abortReasonText(this.context.signal?.reason) ?? 'Cancelled by the caller';
  }

  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.context.signal?.removeEventListener('abort', this.onCallerAbort);
  }

  private halt(stop: HttpCallStop): void {
    if (this.stop) return;
    this.stop = stop;
    this.controller.abort(new Error(`call stopped: ${stop.kind}`));
  }
}

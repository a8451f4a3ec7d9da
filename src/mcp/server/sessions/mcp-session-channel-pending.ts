import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { JsonRpcId, JsonRpcResponse } from '../../protocol/jsonrpc';
import { McpClientRequestError, McpClientRequestTimeoutError } from '../../errors/mcp-client-request.errors';

/** One server->client request waiting for the client's answer. */
interface Waiter {
  method: string;
  /** `<session>\0<id of the client request being handled>`: cancelling that call rejects the wait. */
  callKey: string;
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

function callKeyOf(sessionId: string, callId: JsonRpcId): string {
  return `${sessionId}\u0000${typeof callId}:${callId}`;
}

/**
 * The server->client requests of this process that wait for an answer, by session and id. The
 * answer arrives as a separate POST, on this replica or another (then through the session bus).
 * Ids carry a per-process prefix, so replicas never hand out the same one within a session.
 */
@Injectable()
export class McpPendingClientRequests {
  private readonly waiting = new Map<string, Waiter>();
  private readonly prefix = `srv-${randomBytes(6).toString('base64url')}`;
  private counter = 0;

  /** A request id no other request of this process (or replica) uses. */
  nextId(): string {
    this.counter += 1;
    return `${this.prefix}-${this.counter}`;
  }

  /**
   * Waits for the answer to request `id` sent on `sessionId` while handling client request
   * `callId`. Rejects on a JSON-RPC error answer, after `timeoutMs`, when `signal` aborts, or
   * when the call is cancelled.
   */
  wait(
    sessionId: string,
    id: string,
    method: string,
    callId: JsonRpcId,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const key = `${sessionId}\u0000${id}`;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiting.delete(key);
      };
      const onAbort = () => waiter.reject(signal?.reason);
      const waiter: Waiter = {
        method,
        callKey: callKeyOf(sessionId, callId),
        resolve: (result) => (done(), resolve(result)),
        reject: (error) => (done(), reject(error)),
      };
      const timer = setTimeout(() => waiter.reject(new McpClientRequestTimeoutError(method, timeoutMs)), timeoutMs);
      timer.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(key, waiter);
    });
  }

  /** Hands a client's answer to the request waiting for it; false when none waits here. */
  settle(sessionId: string, response: JsonRpcResponse): boolean {
    if (response.id === null || response.id === undefined) return false;
    const waiter = this.waiting.get(`${sessionId}\u0000${response.id}`);
    if (!waiter) return false;
    if ('result' in response) waiter.resolve(response.result ?? {});
    else
      waiter.reject(
        new McpClientRequestError(waiter.method, response.error.code, response.error.message, response.error.data),
      );
    return true;
  }

  /** Rejects every wait of the cancelled client request `callId` on `sessionId`. */
  cancelCall(sessionId: string, callId: JsonRpcId, reason: string): void {
    const callKey = callKeyOf(sessionId, callId);
    for (const waiter of [...this.waiting.values()]) if (waiter.callKey === callKey) waiter.reject(new Error(reason));
  }

  /** How many answers this process waits for. */
  get size(): number {
    return this.waiting.size;
  }
}

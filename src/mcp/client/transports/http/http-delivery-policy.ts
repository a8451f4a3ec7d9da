import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import { methodFacts } from '../../../protocol/method-catalog';
import type { ResolvedHttpTransportOptions } from './http.options';

/** HTTP statuses worth another try for an idempotent message: overload and server failures. */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

/**
 * True when the message may be sent again: notifications, and the requests the method catalog
 * calls idempotent (they read, list, or set a state to the same value). Everything else (first
 * of all `tools/call`, which runs a tool, and requests MCP does not define) is sent at most once
 * unless the connection provably never opened.
 */
export function isIdempotent(message: JsonRpcRequest | JsonRpcNotification): boolean {
  return !('id' in message) || methodFacts(message.method)?.idempotent === true;
}

/** True when a response with this status did not answer the message and may be retried. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** Delay before retry number `attempt` (0-based): exponential, capped, with a little jitter. */
export function backoffDelay(
  attempt: number,
  options: Pick<ResolvedHttpTransportOptions, 'initialDelayMs' | 'maxDelayMs'>,
): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** attempt);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

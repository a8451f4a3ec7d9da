import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import type { ResolvedHttpTransportOptions } from './http.options';

/**
 * Requests that may be sent twice without harm: they read, list, or set a state to the same
 * value. Everything else (first of all `tools/call`, which runs a tool) is sent at most once
 * unless the connection provably never opened.
 */
export const HTTP_IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'ping',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
]);

/** HTTP statuses worth another try for an idempotent message: overload and server failures. */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

/** True when the message may be sent again: notifications and the idempotent requests. */
export function isIdempotent(message: JsonRpcRequest | JsonRpcNotification): boolean {
  return !('id' in message) || HTTP_IDEMPOTENT_METHODS.has(message.method);
}

/** True when a response with this status did not answer the message and may be retried. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** Delay before retry number `attempt` (0-based): exponential, capped, with a little jitter. */
export function backoffDelay(attempt: number, options: Pick<ResolvedHttpTransportOptions, 'initialDelayMs' | 'maxDelayMs'>): number {
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

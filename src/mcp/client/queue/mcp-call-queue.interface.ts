import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import type {
  McpCallEvent,
  McpCallJob,
  McpCallServerRequestHandler,
  McpCallState,
} from '../interfaces/mcp-call.interface';

/** Receives the notifications servers sent during calls (e.g. `notifications/tools/list_changed`). */
export type McpCallNotificationListener = (server: string, notification: JsonRpcNotification) => void;

/** What the caller of `execute` watches: the events of its call, and its abort signal. */
export interface McpCallWatch {
  /** Receives the progress and log messages of the call, in order. */
  onEvent?: (event: McpCallEvent) => void;
  /** Aborts the call (see `McpCallOptions.signal`). */
  signal?: AbortSignal;
  /** Answers the server's requests of the call (see `McpCallOptions.onServerRequest`; Bull relays them from the worker through Redis). */
  onServerRequest?: McpCallServerRequestHandler;
}

/**
 * Where client calls run. `BullCallQueue` keeps them as jobs in Redis for any worker;
 * `InlineCallQueue` runs the same processor in this process and keeps outcomes in memory.
 */
export interface McpCallQueue {
  /** `bull` (Redis) or `inline` (this process). */
  readonly mode: 'bull' | 'inline';
  /** Starts processing jobs, when this process is a worker. */
  start(): void;
  /** Enqueues a call and resolves to its id once it is durably queued. */
  submit(job: McpCallJob): Promise<string>;
  /** Runs a call and waits for its outcome, without keeping it for `getCallResult` longer than needed. */
  execute(job: McpCallJob, watch?: McpCallWatch): Promise<Record<string, unknown>>;
  /** The current state of a call. @throws McpCallNotFoundError */
  state(id: string): Promise<McpCallState>;
  /**
   * Waits for a call's outcome: its JSON-RPC result, or its typed error. Bull: gives up after
   * `timeoutMs` (default: the client's `waitTimeoutMs`) with `McpCallWaitTimeoutError`.
   */
  wait(id: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Subscribes to server notifications seen while running calls (in any worker for Bull). */
  onNotification(listener: McpCallNotificationListener): void;
  /** Stops processing and releases connections. */
  close(): Promise<void>;
  /** What the queue holds and who works on it, for health checks. */
  stats(): Promise<McpCallQueueStats>;
}

/** A snapshot of a call queue, for health checks. */
export interface McpCallQueueStats {
  /** `bull` (Redis) or `inline` (this process). */
  mode: 'bull' | 'inline';
  /** Workers consuming the queue: Bull's registered workers (every process), or 1 for the inline worker (0 once closed). */
  workers: number;
  /** Calls running now (on this process for inline; the queue's active jobs for Bull). */
  active: number;
  /** Calls waiting for a worker. */
  waiting: number;
  /** Age of the oldest waiting call, in milliseconds, or null when none waits. */
  oldestWaitingMs: number | null;
}

import { McpClientError } from './mcp-client.errors';
import { McpInfrastructureError } from './mcp-infrastructure.errors';

/**
 * The database did not answer within `database.timeoutMs`, or refused the connection. The
 * endpoint answers 503 with `Retry-After`; the work may still complete once the database is back.
 */
export class McpDatabaseUnavailableError extends McpInfrastructureError {
  constructor(
    /** What was being done, e.g. `session lookup`. */
    readonly operation: string,
    /** The bound that was exceeded, when it was a timeout. */
    readonly timeoutMs?: number,
    options?: { cause?: unknown },
  ) {
    super(
      timeoutMs === undefined
        ? `The database is unavailable (${operation})`
        : `The database did not answer within ${timeoutMs} ms (${operation})`,
      options,
    );
    this.name = 'McpDatabaseUnavailableError';
  }
}

/**
 * The Redis connection of the session bus (the mount's `redis`) is down or did not answer in time: a
 * message between replicas (an answer to a server request, a cancellation, a notification, a
 * stream claim) could not be sent. The endpoint answers 503 when a request depends on it.
 */
export class McpBusUnavailableError extends McpInfrastructureError {
  constructor(
    /** What was being done, e.g. `publish`. */
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`The session bus (Redis) is unavailable: ${operation} failed`, options);
    this.name = 'McpBusUnavailableError';
  }
}

/**
 * The Redis of the client's call queue (its `redis`) is down or did not answer in time.
 * `delivered` is false when nothing reached Redis (the connection was down) or when the
 * at-most-once mark could not be written (the tool was not called): trying again later is safe.
 * It is true when a command was sent but not answered in time, or a wait lost its connection:
 * the call may exist and run; read it with `getCallResult`.
 */
export class McpQueueUnavailableError extends McpClientError {
  constructor(
    /** What was being done, e.g. `enqueue`. */
    readonly operation: string,
    /** Why, e.g. `the connection to Redis is reconnecting`. */
    readonly reason: string,
    delivered = false,
  ) {
    super(`The call queue's Redis is unavailable (${operation}): ${reason}`, delivered);
  }
}

/**
 * `callTool` or `waitForCall` gave up waiting for the outcome of a queued call after
 * `waitTimeoutMs` (no worker took it, or its completion event was lost). The call may still run
 * (`delivered` is true); read its state later with `getCallResult(callId)`.
 */
export class McpCallWaitTimeoutError extends McpClientError {
  constructor(
    /** The id of the call. */
    readonly callId: string,
    /** The bound that was exceeded. */
    readonly timeoutMs: number,
  ) {
    super(
      `No outcome for call ${callId} within ${timeoutMs} ms (no worker took it, or its completion was lost); it may still run: check getCallResult("${callId}")`,
      true,
    );
  }
}

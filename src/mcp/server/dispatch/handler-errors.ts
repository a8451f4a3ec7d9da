import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';
import { McpRpcError } from '../../errors/mcp-rpc.errors';

/** An error class, abstract or not, whatever its constructor takes. */
type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Thrown by `ctx.startTask()` in a handler that runs before its task exists (`inputBeforeTask`):
 * it escapes the tool's `isError` mapping, and the tool invoker creates the task.
 */
export class TaskStartSignal extends Error {
  constructor() {
    super('The handler asked to continue as a task');
    this.name = 'TaskStartSignal';
  }
}

const propagatedErrors = new Set<ErrorClass>([McpRpcError, McpInfrastructureError, TaskStartSignal]);

/**
 * Marks an error class as one a handler failure must not swallow into an `isError` result: it
 * propagates to the carrier (a JSON-RPC error, an HTTP 5xx, an `input_required` round trip).
 * The set is the process's: an error class means the same to every mount.
 */
export function propagateFromHandlers(errorClass: ErrorClass): void {
  propagatedErrors.add(errorClass);
}

/** True when `error` is of a class handler failures must propagate (see `propagateFromHandlers`). */
export function isPropagated(error: unknown): boolean {
  for (const errorClass of propagatedErrors) if (error instanceof errorClass) return true;
  return false;
}

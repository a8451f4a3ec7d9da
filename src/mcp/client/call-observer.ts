import type { JsonRpcNotification } from '../protocol/jsonrpc';
import { McpMethod } from '../protocol/mcp-methods';
import type { McpCallAttempt } from './interfaces/mcp-call-attempt.interface';
import { McpCallAbortedError, abortReasonText } from './mcp-call-aborted.errors';
import type { McpCallEvent, McpCallJob } from './interfaces/mcp-call.interface';
import type { McpNotificationOrigin, McpServerNotificationHandler } from './transports/mcp-transport.interface';

/**
 * The event a notification is for the caller of `job`, or null: progress only with the call's own
 * token (tokens are unique per call, so concurrent calls never see each other's), log messages
 * only from the call's own stream (a session's standalone stream is shared by its calls).
 */
export function callEventOf(
  job: McpCallJob,
  notification: JsonRpcNotification,
  origin: McpNotificationOrigin | undefined,
): McpCallEvent | null {
  const params = notification.params ?? {};
  if (notification.method === McpMethod.Progress) {
    if (
      job.progressToken === undefined ||
      params.progressToken !== job.progressToken ||
      typeof params.progress !== 'number'
    )
      return null;
    return {
      kind: 'progress',
      progress: {
        progress: params.progress,
        ...(typeof params.total === 'number' ? { total: params.total } : {}),
        ...(typeof params.message === 'string' ? { message: params.message } : {}),
      },
    };
  }
  if (notification.method === McpMethod.LoggingMessage) {
    if (!job.forwardLogs || origin !== 'request' || typeof params.level !== 'string') return null;
    return {
      kind: 'log',
      log: {
        level: params.level,
        ...(typeof params.logger === 'string' ? { logger: params.logger } : {}),
        data: params.data,
      },
    };
  }
  return null;
}

/**
 * The notification handler of one run of `job`: every notification goes to the app-wide
 * listeners (`attempt.notify`), and the call's own progress and log messages to its caller.
 */
export function observeCall(job: McpCallJob, attempt: McpCallAttempt): McpServerNotificationHandler {
  return (notification, origin) => {
    attempt.notify(job.server, notification);
    const event = callEventOf(job, notification, origin);
    if (event) attempt.report(event);
  };
}

/** Throws `McpCallAbortedError` (not delivered) when the caller aborted before the request was sent. */
export function refuseAborted(job: McpCallJob, attempt: McpCallAttempt): void {
  if (attempt.signal?.aborted)
    throw new McpCallAbortedError(job.server, job.method, false, abortReasonText(attempt.signal.reason));
}

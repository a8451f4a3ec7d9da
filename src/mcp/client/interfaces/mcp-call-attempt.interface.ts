import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import type { McpCallEvent, McpCallServerRequestHandler } from './mcp-call.interface';

/** What the queue knows about the run of one call. */
export interface McpCallAttempt {
  /** The call id (Bull job id, or the inline id). */
  id: string;
  /**
   * Durably marks the call as handed to the transport. Resolves false when an earlier run of the
   * same call already did (its worker died): the call must not be sent again.
   */
  claim(): Promise<boolean>;
  /** Removes the mark: the delivery provably never reached the server. */
  release(): Promise<void>;
  /** Passes a server notification on to whoever listens (e.g. caches of tool lists). */
  notify(server: string, notification: JsonRpcNotification): void;
  /** Passes progress or a log message of this call to its caller (in whichever process it waits). */
  report(event: McpCallEvent): void;
  /** The task a run of this call created, when one did (stored by `rememberTask`), else null. */
  storedTask(): Promise<McpStoredTask | null>;
  /**
   * Durably records the task the server created for this call, before it is polled: a later run
   * (after the worker died) resumes polling it instead of calling the tool again.
   */
  rememberTask(task: McpStoredTask): Promise<void>;
  /**
   * Answers a request the server sent during this call (`elicitation/create`,
   * `sampling/createMessage`, `roots/list`) through the caller's `onServerRequest`, before the
   * app-wide handlers; absent when the caller passed none.
   */
  answer?: McpCallServerRequestHandler;
  /** Fires when the caller aborts the call (in whichever process it waits). */
  signal?: AbortSignal;
}

/** The task a `tools/call` created on the server, as a call keeps it. */
export interface McpStoredTask {
  /** The server's task id. */
  taskId: string;
  /** The protocol revision it was created in (2026-07-28 polls with stateless requests). */
  protocolVersion: string;
}

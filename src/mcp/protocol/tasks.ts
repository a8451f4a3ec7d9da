/**
 * The vocabulary of the experimental tasks utility of 2025-11-25: task statuses, a tool's task
 * support, the `_meta` key that ties a message to its task, and the server capability.
 */

/** The status of a task: `working` first, then maybe `input_required`, then one terminal status. */
export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The statuses a task never leaves. */
export const TERMINAL_TASK_STATUSES: readonly McpTaskStatus[] = ['completed', 'failed', 'cancelled'];

/** True when a task in `status` is over (completed, failed or cancelled). */
export function isTerminalTaskStatus(status: string): boolean {
  return (TERMINAL_TASK_STATUSES as readonly string[]).includes(status);
}

/** Whether a tool may (`optional`), must (`required`) or must not (`forbidden`) be called as a task. */
export type McpTaskSupport = 'forbidden' | 'optional' | 'required';

/** Every value of `execution.taskSupport`. */
export const MCP_TASK_SUPPORT_VALUES: readonly McpTaskSupport[] = ['forbidden', 'optional', 'required'];

/** The `_meta` key naming the task a message belongs to (`{ taskId }`). */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** The `tasks` server capability of a server whose tools may run as tasks. */
export function tasksServerCapability(): Record<string, unknown> {
  return { list: {}, cancel: {}, requests: { tools: { call: {} } } };
}

/** The identifier of the tasks extension of 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The `resultType` of a `CreateTaskResult` on 2026-07-28. */
export const TASK_RESULT_TYPE = 'task';

/** True when per-request client capabilities declare the tasks extension (`extensions["io.modelcontextprotocol/tasks"]`). */
export function declaresTasksExtension(capabilities: Record<string, unknown> | null | undefined): boolean {
  const extensions = capabilities?.extensions;
  if (!extensions || typeof extensions !== 'object' || Array.isArray(extensions)) return false;
  const declared = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return !!declared && typeof declared === 'object' && !Array.isArray(declared);
}

/** The `data` of a -32021 error that names the tasks extension as the missing client capability. */
export function tasksExtensionRequired(): Record<string, unknown> {
  return { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
}

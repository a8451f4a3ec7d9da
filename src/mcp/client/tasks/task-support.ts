import type { McpTaskSupport } from '../../protocol/tasks';
import type { McpToolDefinition } from '../tool-router';

/** True when a 2025-11-25 server declared task-augmented `tools/call` (`tasks.requests.tools.call`). */
export function allowsTaskCalls(capabilities: Record<string, unknown>): boolean {
  const requests = (capabilities.tasks as { requests?: { tools?: { call?: unknown } } } | undefined)?.requests;
  const call = requests?.tools?.call;
  return call !== undefined && call !== null && call !== false;
}

/** A tool's `execution.taskSupport`, or undefined when it names none (a server that predates tasks). */
export function taskSupportOf(tool: McpToolDefinition | undefined): McpTaskSupport | undefined {
  const support = (tool?.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  return support === 'optional' || support === 'required' || support === 'forbidden' ? support : undefined;
}

import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidInputBeforeTaskMessage, invalidTaskSupportMessage } from '../../mcp.messages';
import { MCP_TASK_SUPPORT_VALUES, type McpTaskSupport } from '../../protocol/tasks';

/** The `task` option of a tool, checked at boot: a typo would otherwise publish a value clients reject. */
export function checkedTaskSupport(value: unknown, owner: string): McpTaskSupport {
  if (!(MCP_TASK_SUPPORT_VALUES as readonly unknown[]).includes(value))
    throw new McpConfigurationError(invalidTaskSupportMessage(owner, value));
  return value as McpTaskSupport;
}

/** The `inputBeforeTask` option of a tool, checked at boot: a boolean, true only on a tool that allows tasks. */
export function checkedInputBeforeTask(value: unknown, task: unknown, owner: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean' || (value && task !== 'optional' && task !== 'required'))
    throw new McpConfigurationError(invalidInputBeforeTaskMessage(owner, value, task));
  return value;
}

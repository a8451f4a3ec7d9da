import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidTaskSupportMessage } from '../../mcp.messages';
import { MCP_TASK_SUPPORT_VALUES, type McpTaskSupport } from '../../protocol/tasks';

/** The `task` option of a tool, checked at boot: a typo would otherwise publish a value clients reject. */
export function checkedTaskSupport(value: unknown, owner: string): McpTaskSupport {
  if (!(MCP_TASK_SUPPORT_VALUES as readonly unknown[]).includes(value)) throw new McpConfigurationError(invalidTaskSupportMessage(owner, value));
  return value as McpTaskSupport;
}

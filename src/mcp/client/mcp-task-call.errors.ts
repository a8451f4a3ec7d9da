import { McpClientError } from '../errors/mcp-client.errors';

/**
 * `callTool` was asked to run a tool as a task (`McpCallOptions.task`) that its server publishes
 * with `execution.taskSupport: 'forbidden'`. Nothing was sent.
 */
export class McpTaskNotSupportedError extends McpClientError {
  constructor(
    /** Name of the configured server. */
    readonly server: string,
    /** The tool's name. */
    readonly tool: string,
  ) {
    super(
      `The tool "${tool}" of MCP server "${server}" cannot run as a task (execution.taskSupport is "forbidden"); call it without the task option.`,
      false,
    );
  }
}

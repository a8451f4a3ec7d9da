import { SetMetadata } from '@nestjs/common';
import { MCP_PROMPT_METADATA } from '../../mcp.constants';
import type { McpPromptMetadata, McpPromptOptions } from '../../interfaces/mcp-prompt-options.interface';

/**
 * Publishes a provider method as an MCP prompt (`prompts/list`, `prompts/get`). The method
 * receives the validated arguments (a plain object of strings, or an instance of the arguments
 * DTO) and an `McpToolContext`; see `McpPromptReturn` for what it may return.
 *
 * @example
 * ```ts
 * @McpPrompt({ description: 'Review code', arguments: [{ name: 'code', required: true }] })
 * review({ code }: { code: string }) { return `Please review:\n${code}`; }
 * ```
 */
export function McpPrompt(options: McpPromptOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: McpPromptMetadata = { ...options, name: options.name ?? String(propertyKey) };
    SetMetadata(MCP_PROMPT_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

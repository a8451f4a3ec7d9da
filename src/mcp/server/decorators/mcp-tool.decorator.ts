import { SetMetadata } from '@nestjs/common';
import { MCP_TOOL_METADATA } from '../../mcp.constants';
import type { McpToolMetadata, McpToolOptions } from '../../interfaces/mcp-tool-options.interface';

/**
 * Publishes a provider method as an MCP tool. The method receives the validated input (a DTO
 * instance, a Standard Schema's parsed value typed by `McpToolArgs<typeof schema>`, or the JSON
 * object a JSON Schema accepted) and an `McpToolContext`; see `McpToolReturn` for what it may return.
 *
 * @example
 * ```ts
 * @McpTool({ description: 'Echoes text back', input: EchoInput })
 * echo({ text }: EchoInput) { return text; }
 *
 * @McpTool({ description: 'Shouts', input: Shout }) // const Shout = z.object({ text: z.string() })
 * shout({ text }: McpToolArgs<typeof Shout>) { return text.toUpperCase(); }
 * ```
 */
export function McpTool(options: McpToolOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: McpToolMetadata = { ...options, name: options.name ?? String(propertyKey) };
    SetMetadata(MCP_TOOL_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

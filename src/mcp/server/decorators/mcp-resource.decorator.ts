import { SetMetadata } from '@nestjs/common';
import { MCP_RESOURCE_METADATA } from '../../mcp.constants';
import type { McpResourceMetadata, McpResourceOptions } from '../../interfaces/mcp-resource-options.interface';

/**
 * Publishes a provider method as an MCP resource at a fixed URI (`resources/list`,
 * `resources/read`). The method receives `{ uri, params }` and an `McpToolContext`; see
 * `McpResourceReturn` for what it may return.
 *
 * @example
 * ```ts
 * @McpResource({ uri: 'config://app', mimeType: 'application/json' })
 * config() { return JSON.stringify(this.settings); }
 * ```
 */
export function McpResource(options: McpResourceOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: McpResourceMetadata = { ...options, name: options.name ?? String(propertyKey) };
    SetMetadata(MCP_RESOURCE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

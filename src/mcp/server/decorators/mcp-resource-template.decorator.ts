import { SetMetadata } from '@nestjs/common';
import { MCP_RESOURCE_TEMPLATE_METADATA } from '../../mcp.constants';
import type {
  McpResourceTemplateMetadata,
  McpResourceTemplateOptions,
} from '../../interfaces/mcp-resource-options.interface';

/**
 * Publishes a provider method as an MCP resource template (`resources/templates/list`): a
 * `resources/read` of any URI matching the RFC 6570 level-1 template reaches the method with the
 * decoded variables in `params`. Returning `null` or `undefined` answers "resource not found".
 *
 * @example
 * ```ts
 * @McpResourceTemplate({ uriTemplate: 'users://{id}/profile', mimeType: 'application/json',
 *   complete: { id: (value) => this.ids.filter((id) => id.startsWith(value)) } })
 * profile({ params }: McpResourceRequest) { return this.users.find(params.id)?.toJson(); }
 * ```
 */
export function McpResourceTemplate(options: McpResourceTemplateOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: McpResourceTemplateMetadata = { ...options, name: options.name ?? String(propertyKey) };
    SetMetadata(MCP_RESOURCE_TEMPLATE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

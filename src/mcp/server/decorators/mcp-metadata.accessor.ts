import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  MCP_PROMPT_METADATA,
  MCP_RESOURCE_METADATA,
  MCP_RESOURCE_TEMPLATE_METADATA,
  MCP_TOOL_METADATA,
} from '../../mcp.constants';
import type { McpToolMetadata } from '../../interfaces/mcp-tool-options.interface';
import type { McpResourceMetadata, McpResourceTemplateMetadata } from '../../interfaces/mcp-resource-options.interface';
import type { McpPromptMetadata } from '../../interfaces/mcp-prompt-options.interface';

/** Reads the metadata `@McpTool`, `@McpResource`, `@McpResourceTemplate` and `@McpPrompt` leave on provider methods. */
@Injectable()
export class McpMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** The tool metadata on `method`, or undefined when it is not a tool. */
  getToolMetadata(method: unknown): McpToolMetadata | undefined {
    if (typeof method !== 'function') return undefined;
    return this.reflector.get<McpToolMetadata | undefined>(MCP_TOOL_METADATA, method);
  }

  /** The `@McpResource` metadata on `method`, if any. */
  getResourceMetadata(method: unknown): McpResourceMetadata | undefined {
    return typeof method === 'function'
      ? this.reflector.get<McpResourceMetadata | undefined>(MCP_RESOURCE_METADATA, method)
      : undefined;
  }

  /** The `@McpResourceTemplate` metadata on `method`, if any. */
  getResourceTemplateMetadata(method: unknown): McpResourceTemplateMetadata | undefined {
    return typeof method === 'function'
      ? this.reflector.get<McpResourceTemplateMetadata | undefined>(MCP_RESOURCE_TEMPLATE_METADATA, method)
      : undefined;
  }

  /** The `@McpPrompt` metadata on `method`, if any. */
  getPromptMetadata(method: unknown): McpPromptMetadata | undefined {
    return typeof method === 'function'
      ? this.reflector.get<McpPromptMetadata | undefined>(MCP_PROMPT_METADATA, method)
      : undefined;
  }
}

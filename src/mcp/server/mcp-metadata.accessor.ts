import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MCP_TOOL_METADATA } from '../mcp.constants';
import type { McpToolMetadata } from '../interfaces/mcp-tool-options.interface';

/** Reads the metadata `@McpTool` leaves on provider methods. */
@Injectable()
export class McpMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** The tool metadata on `method`, or undefined when it is not a tool. */
  getToolMetadata(method: unknown): McpToolMetadata | undefined {
    if (typeof method !== 'function') return undefined;
    return this.reflector.get<McpToolMetadata | undefined>(MCP_TOOL_METADATA, method);
  }
}

import { applyDecorators, SetMetadata } from '@nestjs/common';
import type { McpClientHandlerKind, McpSamplingHandlerOptions } from '../interfaces/mcp-client-handlers.interface';
import { MCP_CLIENT_HANDLER_METADATA, MCP_SAMPLING_HANDLER_OPTIONS_METADATA } from '../mcp-client.constants';

function handlerDecorator(kind: McpClientHandlerKind): () => MethodDecorator {
  return () => SetMetadata(MCP_CLIENT_HANDLER_METADATA, kind);
}

/**
 * Marks a provider method as the answer to `sampling/createMessage`: it receives the request's
 * params and an `McpClientHandlerContext`, and returns the `CreateMessageResult`. With
 * `{ tools: true }` it also receives tool-enabled requests (`tools`, `toolChoice`) and may answer
 * with `tool_use` content; the client then declares `sampling.tools`.
 */
export function McpSamplingHandler(options: McpSamplingHandlerOptions = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(MCP_CLIENT_HANDLER_METADATA, 'sampling'),
    SetMetadata(MCP_SAMPLING_HANDLER_OPTIONS_METADATA, { ...options }),
  );
}

/** Marks a provider method as the answer to form mode `elicitation/create` (returns an `ElicitResult`). */
export const McpElicitationHandler = handlerDecorator('elicitation');

/**
 * Marks a provider method as the answer to URL mode `elicitation/create`: it shows the URL,
 * asks the user's consent to open it, and returns an `ElicitResult` without content.
 */
export const McpUrlElicitationHandler = handlerDecorator('urlElicitation');

/** Marks a provider method as the answer to `roots/list` (returns `{ roots: [...] }`). */
export const McpRootsHandler = handlerDecorator('roots');

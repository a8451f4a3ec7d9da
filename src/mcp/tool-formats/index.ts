/**
 * Tool definitions for LLM APIs (the `durable-mcp/tool-formats` entry point): the tools of the
 * servers `McpClientService` reaches (`listTools()`), as OpenAI, Anthropic and Gemini
 * function-calling declarations.
 *
 * @packageDocumentation
 */
export { toOpenAiTools, toAnthropicTools, toGeminiFunctionDeclarations } from '../client/tool-format-converters';
export type {
  OpenAiTool,
  AnthropicTool,
  GeminiFunctionDeclaration,
  ToolFormatOptions,
  McpToolFormatInput,
} from '../client/tool-format-converters';
export type { McpToolDefinition, McpServerTool } from '../client/tool-router';
export type { JsonSchema } from '../interfaces/mcp-tool-options.interface';

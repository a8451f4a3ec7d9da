import type { McpServerTool, McpToolDefinition } from './tool-router';

/** An OpenAI (Chat Completions / Responses) function tool. */
export interface OpenAiTool {
  /** Always `'function'`. */
  type: 'function';
  /** The function: its name, description and JSON Schema of its parameters. */
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/** An Anthropic Messages API tool. */
export interface AnthropicTool {
  /** The tool's name (with `prefixServer`, `server__tool`). */
  name: string;
  /** The tool's description, when it has one. */
  description?: string;
  /** The JSON Schema of the tool's input. */
  input_schema: Record<string, unknown>;
}

/** A Google Gemini function declaration (OpenAPI-subset schema). */
export interface GeminiFunctionDeclaration {
  /** The function's name (with `prefixServer`, `server__tool`). */
  name: string;
  /** The function's description, when it has one. */
  description?: string;
  /** The input schema in Gemini's OpenAPI subset; left out for a tool without properties. */
  parameters?: Record<string, unknown>;
}

/** Options of the converters. */
export interface ToolFormatOptions {
  /**
   * Prefix each name with its server (`server__tool`) when given `McpServerTool` entries, so
   * tools of several servers cannot collide.
   * @default false
   */
  qualify?: boolean;
}

/** A tool as the converters take it: a server's tool, or one of `listAllTools()` with its server. */
export type McpToolFormatInput = McpToolDefinition | McpServerTool;

/** Function names the model APIs accept: `^[A-Za-z0-9_-]{1,64}$`. */
export function toFunctionName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || '_';
}

function isServerTool(input: McpToolFormatInput): input is McpServerTool {
  return (
    typeof input.server === 'string' &&
    typeof input.tool === 'object' &&
    input.tool !== null &&
    !('inputSchema' in input)
  );
}

function unpack(input: McpToolFormatInput, options: ToolFormatOptions): { name: string; tool: McpToolDefinition } {
  if (isServerTool(input)) {
    const tool = input.tool;
    return { tool, name: toFunctionName(options.qualify ? `${input.server}__${tool.name}` : tool.name) };
  }
  return { tool: input, name: toFunctionName(input.name) };
}

function objectSchema(tool: McpToolDefinition): Record<string, unknown> {
  const { $schema: _schema, ...rest } = tool.inputSchema ?? {};
  return { type: 'object', properties: {}, ...rest };
}

function describe(tool: McpToolDefinition): { description?: string } {
  const text = tool.description ?? tool.title ?? (tool.annotations?.title as string | undefined);
  return text ? { description: text } : {};
}

/** Converts MCP tools to OpenAI function tools. */
export function toOpenAiTools(tools: McpToolFormatInput[], options: ToolFormatOptions = {}): OpenAiTool[] {
  return tools.map((input) => {
    const { name, tool } = unpack(input, options);
    return { type: 'function', function: { name, ...describe(tool), parameters: objectSchema(tool) } };
  });
}

/** Converts MCP tools to Anthropic tools. */
export function toAnthropicTools(tools: McpToolFormatInput[], options: ToolFormatOptions = {}): AnthropicTool[] {
  return tools.map((input) => {
    const { name, tool } = unpack(input, options);
    return { name, ...describe(tool), input_schema: objectSchema(tool) };
  });
}

/** Keywords of Gemini's OpenAPI-subset schema that carry over unchanged. */
const GEMINI_KEYWORDS = [
  'format',
  'description',
  'enum',
  'required',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'title',
];

/** Rewrites a JSON Schema into Gemini's schema: upper-case types, `nullable`, no `$schema`/`additionalProperties`. */
export function toGeminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let type = schema.type;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== 'null');
    if (nonNull.length !== type.length) out.nullable = true;
    type = nonNull[0];
  }
  if (schema.const !== undefined) out.enum = [schema.const];
  if (typeof type === 'string') out.type = type.toUpperCase();
  for (const key of GEMINI_KEYWORDS) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.properties && typeof schema.properties === 'object') {
    const entries = Object.entries(schema.properties as Record<string, Record<string, unknown>>);
    out.properties = Object.fromEntries(entries.map(([key, value]) => [key, toGeminiSchema(value)]));
  }
  if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items))
    out.items = toGeminiSchema(schema.items as Record<string, unknown>);
  const union = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(union)) out.anyOf = union.map(toGeminiSchema);
  if (out.enum) out.enum = (out.enum as unknown[]).map(String);
  return out;
}

/** Converts MCP tools to Gemini function declarations (parameters left out for argument-less tools). */
export function toGeminiFunctionDeclarations(
  tools: McpToolFormatInput[],
  options: ToolFormatOptions = {},
): GeminiFunctionDeclaration[] {
  return tools.map((input) => {
    const { name, tool } = unpack(input, options);
    const schema = objectSchema(tool);
    const hasParameters = Object.keys((schema.properties as Record<string, unknown>) ?? {}).length > 0;
    return { name, ...describe(tool), ...(hasParameters ? { parameters: toGeminiSchema(schema) } : {}) };
  });
}

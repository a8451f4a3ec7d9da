import { McpAmbiguousToolError, McpToolNotFoundError } from '../errors/mcp-client-call.errors';

/** A tool definition as `tools/list` returns it. */
export interface McpToolDefinition {
  /** The tool's name, unique on its server. */
  name: string;
  /** A name to show to people, when the server gives one. */
  title?: string;
  /** What the tool does, for the model. */
  description?: string;
  /** The JSON Schema of the tool's arguments. */
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of the tool's `structuredContent`, when it declares one. */
  outputSchema?: Record<string, unknown>;
  /** Hints about the tool's behaviour (`readOnlyHint`, `destructiveHint`...). */
  annotations?: Record<string, unknown>;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/** A tool and the server that offers it. */
export interface McpServerTool {
  /** The name of the server (its key in `servers`). */
  server: string;
  /** The tool as the server lists it. */
  tool: McpToolDefinition;
}

/** The tool lists of every server, and the servers whose list could not be read. */
export interface McpToolCatalog {
  tools: McpServerTool[];
  unreachable: string[];
}

/**
 * Finds the one server offering a tool.
 * @throws McpAmbiguousToolError when several do, McpToolNotFoundError when none does.
 */
export function routeTool(catalog: McpToolCatalog, name: string): string {
  const servers = catalog.tools.filter((entry) => entry.tool.name === name).map((entry) => entry.server);
  if (servers.length > 1) throw new McpAmbiguousToolError(name, servers);
  if (servers.length === 0) throw new McpToolNotFoundError(name, catalog.unreachable);
  return servers[0];
}

import { McpAmbiguousToolError, McpToolNotFoundError } from '../errors/mcp-client-call.errors';

/** A tool definition as `tools/list` returns it. */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A tool and the server that offers it. */
export interface McpServerTool {
  server: string;
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

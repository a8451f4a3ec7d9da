import { readFileSync } from 'node:fs';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { serversFileInvalidMessage, serversFileUnreadableMessage } from '../../mcp.messages';
import type { McpServerConfig } from '../interfaces/mcp-server-config.interface';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a Claude-Desktop style `mcpServers` file. Entries keep their shape (`{ command, args,
 * env, cwd }` or `{ url, headers }`); the transport is inferred later, when absent, from the
 * presence of `command` or `url`.
 * @throws McpConfigurationError when the file cannot be read or is not such a document.
 */
export function loadServersFile(file: string): Record<string, McpServerConfig> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new McpConfigurationError(serversFileUnreadableMessage(file, (error as Error).message));
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new McpConfigurationError(serversFileInvalidMessage(file, `is not valid JSON (${(error as Error).message})`));
  }
  if (!isObject(document) || !isObject(document.mcpServers)) {
    throw new McpConfigurationError(serversFileInvalidMessage(file, 'has no "mcpServers" object'));
  }
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(document.mcpServers)) {
    if (!isObject(entry)) {
      throw new McpConfigurationError(
        serversFileInvalidMessage(file, `declares "${name}" as ${JSON.stringify(entry)}, not an object`),
      );
    }
    servers[name] = entry as unknown as McpServerConfig;
  }
  return servers;
}

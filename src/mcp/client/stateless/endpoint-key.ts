import { createHash } from 'node:crypto';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';

/**
 * What a protocol-era verdict belongs to: the HTTP endpoint (origin and path, without query or
 * credentials) or the stdio program (argv and working directory). Two MCP endpoints behind one
 * origin may speak different eras (this package mounts several on one app), hence the path.
 * Null for in-process toolsets, which need no verdict.
 */
export function endpointKeyOf(config: McpResolvedServerConfig): string | null {
  let key: string;
  if (config.transport === 'http') {
    const url = new URL(config.url);
    key = `http ${url.origin}${url.pathname}`;
  } else if (config.transport === 'stdio') {
    key = `stdio ${JSON.stringify({ argv: config.command, cwd: config.cwd ?? null })}`;
  } else {
    return null;
  }
  // Keys that fit the endpoint column are stored as they are; longer ones as a digest.
  if (key.length <= MCP_COLUMN_LENGTHS.endpoint) return key;
  return `${config.transport} sha256:${createHash('sha256').update(key).digest('hex')}`;
}

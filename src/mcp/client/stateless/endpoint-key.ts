import { createHash } from 'node:crypto';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';

/** Longest key stored as it is; longer ones are stored as a digest. */
const MAX_PLAIN_KEY = 255;

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
  if (key.length <= MAX_PLAIN_KEY) return key;
  return `${config.transport} sha256:${createHash('sha256').update(key).digest('hex')}`;
}

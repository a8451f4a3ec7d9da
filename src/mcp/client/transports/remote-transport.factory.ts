import { isSupportedSessionVersion } from '../../protocol/revisions';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';
import { HttpTransport } from './http/http.transport';
import type { McpTransport } from './mcp-transport.interface';
import { StdioTransport } from './stdio/stdio.transport';

/**
 * Builds the transport of a stdio or http server entry. `clientCapabilities` are those the
 * registered server->client handlers can answer, announced in the handshake. A `version` pinned to
 * a session revision is the one asked for in `initialize`.
 */
export function createRemoteTransport(config: Exclude<McpResolvedServerConfig, { transport: 'toolset' }>, clientCapabilities: Record<string, unknown>): McpTransport {
  const pinned = isSupportedSessionVersion(config.version) ? { protocolVersion: config.version } : {};
  if (config.transport === 'http') {
    return new HttpTransport({
      url: config.url,
      headers: config.headers,
      bearerToken: config.bearerToken,
      retry: config.retry,
      capabilities: clientCapabilities,
      ...pinned,
    });
  }
  return new StdioTransport({
    command: config.command,
    env: config.env,
    cwd: config.cwd,
    stateless: config.stateless,
    pool: config.pool,
    clientCapabilities,
    ...pinned,
    ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
  });
}

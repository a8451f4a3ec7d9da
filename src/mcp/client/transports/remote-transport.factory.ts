import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';
import { HttpTransport } from './http.transport';
import type { McpTransport } from './mcp-transport.interface';
import { StdioTransport } from './stdio.transport';

/**
 * Builds the transport of a stdio or http server entry. `clientCapabilities` are those the
 * registered server->client handlers can answer, announced in the handshake.
 */
export function createRemoteTransport(config: Exclude<McpResolvedServerConfig, { transport: 'toolset' }>, clientCapabilities: Record<string, unknown>): McpTransport {
  if (config.transport === 'http') {
    return new HttpTransport({
      url: config.url,
      headers: config.headers,
      bearerToken: config.bearerToken,
      retry: config.retry,
      capabilities: clientCapabilities,
    });
  }
  return new StdioTransport({
    command: config.command,
    env: config.env,
    cwd: config.cwd,
    stateless: config.stateless,
    pool: config.pool,
    clientCapabilities,
    ...(config.timeoutMs !== undefined ? { timeout: config.timeoutMs } : {}),
  });
}

import { McpConfigurationError } from '../../errors/mcp-configuration.error';
import { invalidServerMessage } from '../../mcp.messages';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { STATELESS_PROTOCOL_VERSION } from '../../protocol/stateless';
import { SESSION_PROTOCOL_VERSIONS } from '../../protocol/revisions';
import type { McpResolvedServerConfig, McpServerConfig } from '../interfaces/mcp-server-config.interface';
import { assertStdioArgv, toStdioArgv } from '../transports/stdio/stdio-argv';

/** Server names become event rows, session keys and Redis job data: keep them plain. */
const SERVER_NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.-]{1,${MCP_COLUMN_LENGTHS.server}}$`);

function fail(name: string, reason: string): never {
  throw new McpConfigurationError(invalidServerMessage(name, reason));
}

/** The values `version` accepts. */
const VERSIONS: readonly string[] = ['auto', STATELESS_PROTOCOL_VERSION, ...SESSION_PROTOCOL_VERSIONS];

function checkCommon(name: string, config: McpServerConfig): void {
  if (config.version !== undefined && !VERSIONS.includes(config.version)) {
    fail(name, `"version" must be one of ${VERSIONS.map((v) => `'${v}'`).join(', ')}, got ${JSON.stringify(config.version)}`);
  }
  if (config.probeTimeoutMs !== undefined && (!Number.isFinite(config.probeTimeoutMs) || config.probeTimeoutMs <= 0)) {
    fail(name, '"probeTimeoutMs" must be a number > 0');
  }
  if (config.scope !== undefined && config.scope !== 'shared' && config.scope !== 'principal') {
    fail(name, `"scope" must be 'shared' or 'principal', got ${JSON.stringify(config.scope)}`);
  }
  if (config.timeoutMs !== undefined && (!Number.isFinite(config.timeoutMs) || config.timeoutMs <= 0)) {
    fail(name, '"timeoutMs" must be a number > 0');
  }
}

function stdioArgv(name: string, config: { command: unknown; args?: unknown }): string[] {
  try {
    if (typeof config.command === 'string') return toStdioArgv({ command: config.command, args: config.args as string[] | undefined });
    if (config.args !== undefined) fail(name, '"args" is only allowed with a single-program "command" string; put everything in the argv array');
    assertStdioArgv(config.command);
    return [...config.command];
  } catch (error) {
    if (error instanceof McpConfigurationError && !error.message.startsWith('MCP server "')) fail(name, error.message);
    throw error;
  }
}

/**
 * Validates one server entry and names its transport: `command` means stdio, `url` means http,
 * `transport: 'toolset'` must be explicit. A shell command line is refused.
 * @throws McpConfigurationError naming the server and saying how to fix the entry.
 */
export function resolveServerConfig(name: string, config: McpServerConfig): McpResolvedServerConfig {
  if (!SERVER_NAME_PATTERN.test(name)) fail(name, `the name must be 1 to ${MCP_COLUMN_LENGTHS.server} characters of A-Z, a-z, 0-9, "_", "." and "-"`);
  if (typeof config !== 'object' || config === null) fail(name, 'the entry must be an object');
  checkCommon(name, config);
  const raw = config as unknown as Record<string, unknown>;
  const transport = raw.transport ?? ('command' in raw ? 'stdio' : 'url' in raw ? 'http' : undefined);
  switch (transport) {
    case 'stdio': {
      const { args: _args, ...rest } = raw;
      return { ...(rest as object), transport: 'stdio', command: stdioArgv(name, raw as { command: unknown; args?: unknown }) } as McpResolvedServerConfig;
    }
    case 'http': {
      if (typeof raw.url !== 'string') fail(name, '"url" must be a string');
      try {
        const url = new URL(raw.url as string);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `"url" must use http or https, got ${url.protocol}`);
      } catch (error) {
        if (error instanceof McpConfigurationError) throw error;
        fail(name, `"url" is not a valid URL: ${JSON.stringify(raw.url)}`);
      }
      return { ...(config as object), transport: 'http' } as McpResolvedServerConfig;
    }
    case 'toolset': {
      const principal = raw.principal as unknown;
      const valid = typeof principal === 'string' ? principal.length > 0 : typeof (principal as { key?: unknown })?.key === 'string';
      if (!valid) fail(name, 'a toolset server needs "principal": a principal key, or { key, label }');
      return config as McpResolvedServerConfig;
    }
    default:
      return fail(name, transport === undefined ? 'it has neither "command" nor "url"' : `unknown transport ${JSON.stringify(transport)}`);
  }
}

import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../errors/mcp-configuration.errors';
import { invalidServerMessage } from '../../mcp.messages';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { STATELESS_PROTOCOL_VERSION } from '../../protocol/stateless';
import { SESSION_PROTOCOL_VERSIONS } from '../../protocol/revisions';
import type {
  McpResolvedServerConfig,
  McpServerCommonConfig,
  McpServerConfig,
} from '../interfaces/mcp-server-config.interface';
import type { McpTransportFactory } from '../transports/mcp-transport-factory.interface';
import { BUILT_IN_TRANSPORT_FACTORIES } from '../transports/built-in-transports.constants';

/** Server names become event rows, session keys and Redis job data: keep them plain. */
const SERVER_NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.-]{1,${MCP_COLUMN_LENGTHS.server}}$`);

/** The capabilities `announce` may name. */
const ANNOUNCED = optionKeys<McpServerCommonConfig.Announce>({ elicitation: true, sampling: true, roots: true });

/** The values `version` accepts. */
const VERSIONS: readonly string[] = ['auto', STATELESS_PROTOCOL_VERSION, ...SESSION_PROTOCOL_VERSIONS];

/** The settings every entry may carry, whatever its transport, and `transport` itself. */
const COMMON_KEYS = [
  ...optionKeys<McpServerCommonConfig>({
    version: true,
    probeTimeoutMs: true,
    scope: true,
    timeoutMs: true,
    announce: true,
  }),
  'transport',
];

function fail(name: string, reason: string): never {
  throw new McpConfigurationError(invalidServerMessage(name, reason));
}

function checkCommon(name: string, config: McpServerConfig): void {
  if (config.version !== undefined && !VERSIONS.includes(config.version)) {
    fail(
      name,
      `"version" must be one of ${VERSIONS.map((v) => `'${v}'`).join(', ')}, got ${JSON.stringify(config.version)}`,
    );
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
  const announce: unknown = config.announce;
  if (announce === undefined) return;
  if (typeof announce !== 'object' || announce === null || Array.isArray(announce))
    fail(name, `"announce" must be an object with some of ${ANNOUNCED.map((key) => `"${key}"`).join(', ')}`);
  for (const [key, value] of Object.entries(announce)) {
    if (!ANNOUNCED.includes(key))
      fail(name, `"announce" names ${JSON.stringify(key)} (known: ${ANNOUNCED.map((k) => `"${k}"`).join(', ')})`);
    if (typeof value !== 'boolean') fail(name, `"announce.${key}" must be true or false`);
  }
}

/**
 * Validates one server entry and names its transport: `command` means stdio, `url` means http;
 * any other transport (`'toolset'`, or one an app registered) must be named explicitly. The
 * entry's own settings are checked by the factory of its transport.
 * @param factories the transport factories in use, by transport name; the built-in ones by default.
 * @throws McpConfigurationError naming the server and saying how to fix the entry.
 */
export function resolveServerConfig(
  name: string,
  config: McpServerConfig,
  factories: ReadonlyMap<string, McpTransportFactory<object>> = BUILT_IN_TRANSPORT_FACTORIES,
): McpResolvedServerConfig {
  if (!SERVER_NAME_PATTERN.test(name))
    fail(name, `the name must be 1 to ${MCP_COLUMN_LENGTHS.server} characters of A-Z, a-z, 0-9, "_", "." and "-"`);
  if (typeof config !== 'object' || config === null) fail(name, 'the entry must be an object');
  checkCommon(name, config);
  const raw = config as unknown as Record<string, unknown>;
  const transport = raw.transport ?? ('command' in raw ? 'stdio' : 'url' in raw ? 'http' : undefined);
  if (transport === undefined) fail(name, 'it has neither "command" nor "url"');
  const factory = typeof transport === 'string' ? factories.get(transport) : undefined;
  if (!factory) {
    fail(
      name,
      `unknown transport ${JSON.stringify(transport)} (known: ${[...factories.keys()].map((t) => `'${t}'`).join(', ')}; register others with McpClientModule.forRoot({ transports }))`,
    );
  }
  if (factory.optionKeys) assertKnownOptions(raw, [...COMMON_KEYS, ...factory.optionKeys], `MCP server "${name}"`);
  let resolved: object;
  try {
    resolved = factory.resolve ? factory.resolve(name, raw) : raw;
  } catch (error) {
    const message = (error as Error).message;
    if (message.startsWith(`MCP server "${name}"`)) throw error;
    fail(name, message);
  }
  return { ...resolved, transport } as McpResolvedServerConfig;
}

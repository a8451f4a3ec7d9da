import type { QueueOptions } from 'bull';
import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../errors/mcp-configuration.errors';
import { resolveAuditCommit } from '../../persistence/audit-commit';
import { resolveTelemetryOptions, type McpResolvedTelemetryOptions } from '../../telemetry/mcp-telemetry.options';
import { resolveClientRetention, type McpResolvedRetention } from '../../persistence/retention/mcp-retention.options';
import { duplicateServerMessage, invalidClientOptionMessage } from '../../mcp.messages';
import type { McpClientHandlers } from '../interfaces/mcp-client-handlers.interface';
import type { McpClientOptions, McpClientQueueOptions } from '../interfaces/mcp-client-options.interface';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';
import type { McpTransportFactory } from '../transports/mcp-transport-factory.interface';
import { BUILT_IN_TRANSPORT_FACTORIES } from '../transports/built-in-transports.constants';
import { resolveServerConfig } from './server-config-resolver';
import { loadServersFile } from './servers-file-loader';

/** Default queue name of client calls. */
export const DEFAULT_MCP_CALL_QUEUE = 'mcp-calls';

/** Queue settings after defaults; `bull` is null in inline mode. */
export interface McpResolvedQueueOptions {
  /** Bull queue options (redis, prefix, settings), or null to run calls inline. */
  bull: QueueOptions | null;
  name: string;
  concurrency: number;
  worker: boolean;
  attempts: number;
  backoffMs: number;
  keepResultsMs: number;
  commandTimeoutMs: number;
  waitTimeoutMs: number;
}

/** Client options after defaults were applied and every server entry was checked. */
export interface McpResolvedClientOptions {
  servers: Record<string, McpResolvedServerConfig>;
  handlers: McpClientHandlers;
  defaultTimeoutMs: number;
  maxInputRounds: number;
  queue: McpResolvedQueueOptions;
  /** How outbound audit rows commit. */
  audit: { commit: 'sync' | 'async' };
  /** What the client's spans record (`telemetry`, defaults applied). */
  telemetry: McpResolvedTelemetryOptions;
  /** The `retention` option checked; null: nothing is pruned. */
  retention: McpResolvedRetention | null;
}

/** The keys `McpClientModule` reads; anything else is refused at boot. */
const CLIENT_OPTION_KEYS = optionKeys<McpClientOptions>({
  servers: true,
  serversFile: true,
  queue: true,
  handlers: true,
  defaultTimeoutMs: true,
  waitTimeoutMs: true,
  maxInputRounds: true,
  audit: true,
  telemetry: true,
  retention: true,
});
const QUEUE_OPTION_KEYS = optionKeys<McpClientQueueOptions>({
  redis: true,
  name: true,
  prefix: true,
  concurrency: true,
  worker: true,
  attempts: true,
  backoffMs: true,
  settings: true,
  keepResultsMs: true,
  commandTimeoutMs: true,
});

function positiveInteger(option: string, value: number | undefined, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new McpConfigurationError(
      invalidClientOptionMessage(option, allowZero ? 'an integer >= 0' : 'a positive integer'),
    );
  }
  return value;
}

function mergeServers(
  options: McpClientOptions,
  factories: ReadonlyMap<string, McpTransportFactory<object>>,
): Record<string, McpResolvedServerConfig> {
  const declared = { ...(options.servers ?? {}) };
  if (options.serversFile !== undefined) {
    for (const [name, entry] of Object.entries(loadServersFile(options.serversFile))) {
      if (name in declared) throw new McpConfigurationError(duplicateServerMessage(name));
      declared[name] = entry;
    }
  }
  return Object.fromEntries(
    Object.entries(declared).map(([name, entry]) => [name, resolveServerConfig(name, entry, factories)]),
  );
}

function bullOptions(options: McpClientOptions, shared: QueueOptions | undefined): QueueOptions | null {
  const queue = options.queue ?? {};
  const base = queue.redis !== undefined ? { redis: queue.redis } : shared ? { ...shared } : null;
  if (!base) return null;
  return {
    ...base,
    ...(queue.prefix !== undefined ? { prefix: queue.prefix } : {}),
    ...(queue.settings !== undefined ? { settings: { ...(base.settings ?? {}), ...queue.settings } } : {}),
  };
}

/**
 * Applies the client defaults, reads `serversFile`, and checks every server entry against the
 * transport factories in use. `shared` is the host's `BullModule.forRoot` configuration, used
 * when `queue.redis` is absent.
 * @throws McpConfigurationError saying how to fix a mistake.
 */
export function resolveClientOptions(
  options: McpClientOptions | undefined,
  shared?: QueueOptions,
  factories: ReadonlyMap<string, McpTransportFactory<object>> = BUILT_IN_TRANSPORT_FACTORIES,
): McpResolvedClientOptions {
  const client = options ?? {};
  assertKnownOptions(client, CLIENT_OPTION_KEYS, 'McpClientModule');
  const queue = client.queue ?? {};
  assertKnownOptions(queue, QUEUE_OPTION_KEYS, 'McpClientModule option "queue"');
  if (queue.name !== undefined && (typeof queue.name !== 'string' || !queue.name)) {
    throw new McpConfigurationError(invalidClientOptionMessage('queue.name', 'a non-empty string'));
  }
  return {
    servers: mergeServers(client, factories),
    handlers: { ...(client.handlers ?? {}) },
    defaultTimeoutMs: positiveInteger('defaultTimeoutMs', client.defaultTimeoutMs, 60_000),
    maxInputRounds: positiveInteger('maxInputRounds', client.maxInputRounds, 8),
    audit: { commit: resolveAuditCommit(client.audit, invalidClientOptionMessage, 'McpClientModule') },
    telemetry: resolveTelemetryOptions(client.telemetry, invalidClientOptionMessage, 'McpClientModule'),
    retention: resolveClientRetention(client.retention),
    queue: {
      bull: bullOptions(client, shared),
      name: queue.name ?? DEFAULT_MCP_CALL_QUEUE,
      concurrency: positiveInteger('queue.concurrency', queue.concurrency, 8),
      worker: queue.worker ?? true,
      attempts: positiveInteger('queue.attempts', queue.attempts, 3),
      backoffMs: positiveInteger('queue.backoffMs', queue.backoffMs, 500, true),
      keepResultsMs: positiveInteger('queue.keepResultsMs', queue.keepResultsMs, 86_400_000),
      commandTimeoutMs: positiveInteger('queue.commandTimeoutMs', queue.commandTimeoutMs, 5000),
      waitTimeoutMs: positiveInteger('waitTimeoutMs', client.waitTimeoutMs, 600_000),
    },
  };
}

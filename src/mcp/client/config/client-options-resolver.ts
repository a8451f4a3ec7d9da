import type { McpOAuthEncryptionKey } from '../../token-cipher';
import type { QueueOptions } from 'bull';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../../options/options-model';
import type { McpResolvedTelemetryOptions } from '../../telemetry/mcp-telemetry.options';
import { checkRedisConnection } from '../../redis-connection';
import { resolveClientRetention, type McpResolvedRetention } from '../../persistence/retention/mcp-retention.options';
import { MCP_CLIENT_MODULE_OPTIONS_MODEL } from '../mcp-client-module-model.options';
import { duplicateServerMessage, invalidClientOptionMessage } from '../../mcp.messages';
import type { McpClientHandlers } from '../interfaces/mcp-client-handlers.interface';
import type { McpClientOptions } from '../interfaces/mcp-client-options.interface';
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
  /**
   * Replicas that must acknowledge a call's at-most-once mark (`queue.markReplicas`); undefined
   * when the option is absent: the Bull queue then decides by its connection (see `defaultMarkReplicas`).
   */
  markReplicas?: number;
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
  /** User-delegated OAuth settings, defaults applied; checked when a server uses `authorizationCode`. */
  oauth: {
    redirectUri?: string;
    encryptionKeys?: McpOAuthEncryptionKey[];
    authorizationTtlMs: number;
    clientName: string;
  };
}

type Model = typeof MCP_CLIENT_MODULE_OPTIONS_MODEL;

/** The client options as the model resolves them. */
type ModelResolved = ResolvedOptions<McpClientOptions, Model>;

const CONTEXT: OptionsContext = {
  where: 'McpClientModule',
  invalid: invalidClientOptionMessage,
  nonNegativeInteger: 'an integer >= 0',
  validators: { retention: ({ value }) => resolveClientRetention(value), redis: checkRedisConnection },
};

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

function bullOptions(
  redis: McpClientOptions['redis'],
  queue: McpClientOptions.Queue,
  shared: QueueOptions | undefined,
): QueueOptions | null {
  // Bull's type knows URLs and ioredis options; a Cluster description is connected by createBullQueue.
  const base: QueueOptions | null =
    redis !== undefined ? { redis: redis as QueueOptions['redis'] } : shared ? { ...shared } : null;
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
 * when `redis` is absent.
 * @throws McpConfigurationError saying how to fix a mistake.
 */
export function resolveClientOptions(
  options: McpClientOptions | undefined,
  shared?: QueueOptions,
  factories: ReadonlyMap<string, McpTransportFactory<object>> = BUILT_IN_TRANSPORT_FACTORIES,
): McpResolvedClientOptions {
  const client = resolveOptions<ModelResolved>(MCP_CLIENT_MODULE_OPTIONS_MODEL, options, CONTEXT);
  const queue = client.queue;
  return {
    servers: mergeServers(client, factories),
    handlers: { ...(client.handlers ?? {}) },
    defaultTimeoutMs: client.defaultTimeoutMs,
    maxInputRounds: client.advanced.maxInputRounds,
    audit: client.advanced.audit,
    telemetry: client.advanced.telemetry,
    retention: client.retention as McpResolvedRetention | null,
    oauth: client.oauth,
    queue: {
      bull: bullOptions(client.redis, queue, shared),
      name: queue.name,
      concurrency: queue.concurrency,
      worker: queue.worker,
      attempts: queue.attempts,
      backoffMs: queue.backoffMs,
      keepResultsMs: queue.keepResultsMs,
      commandTimeoutMs: queue.commandTimeoutMs,
      ...(queue.markReplicas !== undefined ? { markReplicas: queue.markReplicas } : {}),
      waitTimeoutMs: client.waitTimeoutMs,
    },
  };
}

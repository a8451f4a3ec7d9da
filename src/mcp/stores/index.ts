/**
 * Store contracts of durable-mcp (the `durable-mcp/stores` entry point): what a host needs to
 * write a store of its own or to read the package's tables. The store interfaces and their
 * records, the injection tokens and `Inject*` decorators of each store, the builders of the
 * `stores` extras of `McpModule` and `McpClientModule`, the TypeORM entities one by one with
 * their column lengths, and the idle-session rule a session store applies.
 *
 * @example
 * ```ts
 * import { McpModule } from 'durable-mcp';
 * import { mcpServerStores, type McpEventInput, type McpEventSink } from 'durable-mcp/stores';
 *
 * class StdoutEventSink implements McpEventSink {
 *   async record(input: McpEventInput): Promise<void> {
 *     console.log(JSON.stringify(input));
 *   }
 * }
 *
 * McpModule.forRoot({ auth: (token) => token, stores: mcpServerStores({ events: StdoutEventSink }) });
 * ```
 *
 * The in-memory stores for tests are in `durable-mcp/testing`.
 *
 * @packageDocumentation
 */

// The stores a mount or the client uses, and how a host swaps one. `McpServerStores` and
// `McpClientStores`, what the builders return, are also in `durable-mcp`, whose options name them.
export { mcpServerStores, mcpClientStores } from '../persistence/store-providers';
export type {
  McpServerStoreOverrides,
  McpClientStoreOverrides,
  McpStoreOverride,
  McpServerStores,
  McpClientStores,
} from '../persistence/store-providers';
export type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';

// One contract per store, with its records.
export type {
  McpSessionStore,
  McpInboundSessionRecord,
  McpNewInboundSession,
} from '../persistence/interfaces/mcp-session-store.interface';
export type {
  McpSubscriptionStore,
  McpSubscriptionRecord,
  McpResourceSubscriber,
} from '../persistence/interfaces/mcp-subscription-store.interface';
export type {
  McpHandlerSwitchStore,
  McpHandlerSwitchRecord,
} from '../persistence/interfaces/mcp-handler-switch-store.interface';
export type {
  McpTaskStore,
  McpTaskRecord,
  McpNewTask,
  McpTaskPayload,
} from '../persistence/interfaces/mcp-task-store.interface';
export type {
  McpEventSink,
  McpEventRecord,
  McpEventInput,
  McpEventDirection,
} from '../persistence/interfaces/mcp-event-sink.interface';
export type {
  McpOutboundSessionStore,
  McpOutboundSessionRecord,
  McpOutboundSessionState,
} from '../persistence/interfaces/mcp-outbound-session-store.interface';

// The injection token of each store and its decorator.
export {
  MCP_SESSION_STORE,
  MCP_SUBSCRIPTION_STORE,
  MCP_HANDLER_SWITCH_STORE,
  MCP_TASK_STORE,
  MCP_EVENT_SINK,
  MCP_OUTBOUND_SESSION_STORE,
  MCP_STORE_SETTINGS,
  InjectMcpSessionStore,
  InjectMcpSubscriptionStore,
  InjectMcpHandlerSwitchStore,
  InjectMcpTaskStore,
  InjectMcpEventSink,
  InjectMcpOutboundSessionStore,
  InjectMcpStoreSettings,
} from '../persistence/mcp-persistence.constants';

// The TypeORM entities (`MCP_ENTITIES` in `durable-mcp` lists them all) and their column lengths.
export {
  McpEvent,
  McpInboundSession,
  McpOutboundSession,
  McpResourceSubscription,
  McpHandlerSwitch,
  McpTask,
} from '../persistence/entities';
export { MCP_COLUMN_LENGTHS } from '../persistence/mcp-columns.constants';

// The root types the records above use.
export type { McpPrincipal } from '../interfaces/principal.interface';
export type { McpLogLevel } from '../protocol/log-levels';

// The idle-session rule: a store that filters in code calls `isSessionLive`; one that filters in
// SQL compares `last_seen_at` with `sessionIdleCutoff`.
export { isSessionLive, isSessionIdle, sessionIdleCutoff } from '../persistence/session-liveness';

// PostgreSQL behind a primary and its standbys: a libpq-style host list for the TypeORM pool.
export { mcpPostgresHostList } from '../persistence/postgres-host-list';
export type { McpPostgresHostListConnection, McpPostgresTargetSessionAttrs } from '../persistence/postgres-host-list';

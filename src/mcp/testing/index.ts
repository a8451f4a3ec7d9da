/**
 * Test helpers of durable-mcp (the `durable-mcp/testing` entry point): in-memory stores that
 * follow the same rules as the TypeORM ones, so a host's tests can boot `McpModule` without a
 * database and read what the module stored.
 *
 * @example
 * ```ts
 * import { McpModule } from 'durable-mcp';
 * import { createInMemoryMcpStores } from 'durable-mcp/testing';
 *
 * const stores = createInMemoryMcpStores();
 * const moduleRef = await Test.createTestingModule({
 *   imports: [McpModule.forRoot({ auth: (token) => (token === 'test' ? 'alice' : null), stores })],
 *   providers: [MyTools],
 * }).compile(); // no TypeOrmModule: every store is in memory
 * // ... call the endpoint, then:
 * expect(stores.events.events.map((e) => e.method)).toContain('tools/call');
 * expect(stores.sessions.sessions).toHaveLength(1);
 * ```
 *
 * Each store may also be given as a class (`stores: { events: InMemoryMcpEventSink, ... }`):
 * Nest then builds it inside the mount with the mount's settings, and a test reads it with
 * `app.get(MCP_EVENT_SINK)`.
 */
export { InMemoryMcpSessionStore } from './in-memory-session.store';
export { InMemoryMcpSubscriptionStore } from './in-memory-subscription.store';
export { InMemoryMcpHandlerSwitchStore } from './in-memory-handler-switch.store';
export { InMemoryMcpTaskStore } from './in-memory-task.store';
export { InMemoryMcpEventSink } from './in-memory-event-sink.store';
export { InMemoryMcpOutboundSessionStore } from './in-memory-outbound-session.store';
export { createInMemoryMcpStores } from './in-memory-stores';
export type { InMemoryMcpStores } from './in-memory-stores';
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
export type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
export type { McpPrincipal } from '../interfaces/principal.interface';
export { MCP_LOG_LEVELS } from '../protocol/log-levels';
export type { McpLogLevel } from '../protocol/log-levels';

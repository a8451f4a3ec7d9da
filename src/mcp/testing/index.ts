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
 * Each store may also be given as a class (`stores: mcpServerStores({ events: InMemoryMcpEventSink, ... })`):
 * Nest then builds it inside the mount with the mount's settings, and a test reads it with
 * `app.get(MCP_EVENT_SINK)` (the store tokens and contracts are in `durable-mcp/stores`).
 *
 * @packageDocumentation
 */
export { InMemoryMcpSessionStore } from './in-memory-session.store';
export { InMemoryMcpSubscriptionStore } from './in-memory-subscription.store';
export { InMemoryMcpHandlerSwitchStore } from './in-memory-handler-switch.store';
export { InMemoryMcpTaskStore } from './in-memory-task.store';
export { InMemoryMcpEventSink } from './in-memory-event-sink.store';
export { InMemoryMcpOutboundSessionStore } from './in-memory-outbound-session.store';
export { createInMemoryMcpStores } from './in-memory-stores';
export type { InMemoryMcpStores } from './in-memory-stores';

// The store contracts (from `durable-mcp/stores`) that the signatures above use.
export type {
  McpSessionStore,
  McpInboundSessionRecord,
  McpNewInboundSession,
  McpSubscriptionStore,
  McpSubscriptionRecord,
  McpResourceSubscriber,
  McpHandlerSwitchStore,
  McpHandlerSwitchRecord,
  McpTaskStore,
  McpTaskRecord,
  McpNewTask,
  McpTaskPayload,
  McpEventSink,
  McpEventRecord,
  McpEventInput,
  McpEventDirection,
  McpOutboundSessionStore,
  McpOutboundSessionRecord,
  McpOutboundSessionState,
  McpStoreSettings,
  McpServerStores,
  McpClientStores,
  McpPrincipal,
  McpLogLevel,
} from '../stores';

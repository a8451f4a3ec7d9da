import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import type { McpClientStores, McpServerStores } from '../persistence/store-providers';
import { InMemoryMcpEventSink } from './in-memory-event-sink.store';
import { InMemoryMcpHandlerSwitchStore } from './in-memory-handler-switch.store';
import { InMemoryMcpOutboundSessionStore } from './in-memory-outbound-session.store';
import { InMemoryMcpSessionStore } from './in-memory-session.store';
import { InMemoryMcpSubscriptionStore } from './in-memory-subscription.store';
import { InMemoryMcpTaskStore } from './in-memory-task.store';

/**
 * One in-memory store of every kind, wired together; pass it whole as the `stores` extra of
 * `McpModule` and of `McpClientModule`.
 */
export interface InMemoryMcpStores extends McpServerStores, McpClientStores {
  /** Inbound sessions of the mount. */
  sessions: InMemoryMcpSessionStore;
  /** Resource subscriptions, live as far as `sessions` says. */
  subscriptions: InMemoryMcpSubscriptionStore;
  /** Audit rows: read `events.events`. */
  events: InMemoryMcpEventSink;
  /** Remote sessions of the client. */
  outboundSessions: InMemoryMcpOutboundSessionStore;
  /** The handlers `McpRegistry` switched off: read `handlerSwitches.switches`. */
  handlerSwitches: InMemoryMcpHandlerSwitchStore;
  /** Task-augmented tool calls: read `tasks.tasks`. */
  tasks: InMemoryMcpTaskStore;
}

/**
 * Fresh in-memory stores for one mount. `settings` must match the mount's `mount` and
 * `sessions.idleTtlMs` when they are not the defaults (`'default'`, one hour): instances do not
 * read the module options. Use one set per mount and per test.
 */
export function createInMemoryMcpStores(settings: Partial<McpStoreSettings> = {}): InMemoryMcpStores {
  const sessions = new InMemoryMcpSessionStore(settings);
  return {
    sessions,
    subscriptions: new InMemoryMcpSubscriptionStore(sessions),
    events: new InMemoryMcpEventSink(),
    outboundSessions: new InMemoryMcpOutboundSessionStore(),
    handlerSwitches: new InMemoryMcpHandlerSwitchStore(settings),
    tasks: new InMemoryMcpTaskStore(settings),
    forMcpModule: true,
    forMcpClientModule: true,
  };
}

import type { InjectionToken, Provider, Type } from '@nestjs/common';
import type { McpEventSink } from './interfaces/mcp-event-sink.interface';
import type { McpHandlerSwitchStore } from './interfaces/mcp-handler-switch-store.interface';
import type { McpOutboundSessionStore } from './interfaces/mcp-outbound-session-store.interface';
import type { McpSessionStore } from './interfaces/mcp-session-store.interface';
import type { McpSubscriptionStore } from './interfaces/mcp-subscription-store.interface';
import type { McpTaskStore } from './interfaces/mcp-task-store.interface';
import {
  MCP_EVENT_SINK,
  MCP_HANDLER_SWITCH_STORE,
  MCP_OUTBOUND_SESSION_STORE,
  MCP_SESSION_STORE,
  MCP_SUBSCRIPTION_STORE,
  MCP_TASK_STORE,
} from './mcp-persistence.constants';
import { TypeOrmEventSink } from './typeorm/typeorm-event-sink.store';
import { TypeOrmHandlerSwitchStore } from './typeorm/typeorm-handler-switch.store';
import { TypeOrmOutboundSessionStore } from './typeorm/typeorm-outbound-session.store';
import { TypeOrmSessionStore } from './typeorm/typeorm-session.store';
import { TypeOrmSubscriptionStore } from './typeorm/typeorm-subscription.store';
import { TypeOrmTaskStore } from './typeorm/typeorm-task.store';

/**
 * A store given by the host: a class (instantiated by Nest in the mount's module, so it can
 * inject `MCP_STORE_SETTINGS` and anything else the module sees) or a ready instance.
 */
export type McpStoreOverride<T> = Type<T> | T;

/**
 * Stores of the serving side of a mount, one per slot; each one left out stays on TypeORM.
 * `mcpServerStores()` turns them into the `stores` extra of `McpModule`.
 */
export interface McpServerStoreOverrides {
  /** 2025-era inbound sessions. */
  sessions?: McpStoreOverride<McpSessionStore>;
  /** Resource subscriptions. */
  subscriptions?: McpStoreOverride<McpSubscriptionStore>;
  /** Audit rows of inbound (and, in the same module, outbound) exchanges. */
  events?: McpStoreOverride<McpEventSink>;
  /** The handlers `McpRegistry` switched off. */
  handlerSwitches?: McpStoreOverride<McpHandlerSwitchStore>;
  /** Task-augmented tool calls (`mcp_tasks`). */
  tasks?: McpStoreOverride<McpTaskStore>;
}

/**
 * Stores of the client side, one per slot; each one left out stays on TypeORM.
 * `mcpClientStores()` turns them into the `stores` extra of `McpClientModule`.
 */
export interface McpClientStoreOverrides {
  /** Remote sessions of the client. */
  outboundSessions?: McpStoreOverride<McpOutboundSessionStore>;
  /** Audit rows of outbound exchanges. */
  events?: McpStoreOverride<McpEventSink>;
}

/**
 * The `stores` extra of `McpModule`: built by `mcpServerStores()` of `durable-mcp/stores`, or
 * `createInMemoryMcpStores()` of `durable-mcp/testing`. An object written inline is refused, so
 * each store is checked against its contract where the value is built.
 */
export interface McpServerStores {
  /** Set by the builders: marks a value built for `McpModule`. */
  readonly forMcpModule: true;
  /** @internal */
  readonly sessions?: McpServerStoreOverrides['sessions'];
  /** @internal */
  readonly subscriptions?: McpServerStoreOverrides['subscriptions'];
  /** @internal */
  readonly events?: McpServerStoreOverrides['events'];
  /** @internal */
  readonly handlerSwitches?: McpServerStoreOverrides['handlerSwitches'];
  /** @internal */
  readonly tasks?: McpServerStoreOverrides['tasks'];
}

/**
 * The `stores` extra of `McpClientModule`: built by `mcpClientStores()` of `durable-mcp/stores`,
 * or `createInMemoryMcpStores()` of `durable-mcp/testing`. An object written inline is refused,
 * so each store is checked against its contract where the value is built.
 */
export interface McpClientStores {
  /** Set by the builders: marks a value built for `McpClientModule`. */
  readonly forMcpClientModule: true;
  /** @internal */
  readonly outboundSessions?: McpClientStoreOverrides['outboundSessions'];
  /** @internal */
  readonly events?: McpClientStoreOverrides['events'];
}

/**
 * The `stores` extra of `McpModule` from the stores a host swaps in (a class Nest builds in the
 * mount, or an instance); every slot left out stays on TypeORM.
 *
 * @example
 * ```ts
 * McpModule.forRoot({ auth, stores: mcpServerStores({ events: StdoutEventSink }) });
 * ```
 */
export function mcpServerStores(overrides: McpServerStoreOverrides): McpServerStores {
  return { ...overrides, forMcpModule: true };
}

/**
 * The `stores` extra of `McpClientModule` from the stores a host swaps in (a class Nest builds
 * in the client's module, or an instance); every slot left out stays on TypeORM.
 *
 * @example
 * ```ts
 * McpClientModule.forRoot({ servers, stores: mcpClientStores({ outboundSessions: RedisSessions }) });
 * ```
 */
export function mcpClientStores(overrides: McpClientStoreOverrides): McpClientStores {
  return { ...overrides, forMcpClientModule: true };
}

/** The store providers of one side, and whether they still need `TypeOrmModule.forFeature(MCP_ENTITIES)`. */
export interface McpStoreProviders {
  /** One provider per store token. */
  providers: Provider[];
  /** True while at least one store is the TypeORM one (then the module imports the TypeORM feature). */
  needsTypeOrm: boolean;
}

/** A store slot: its token, the host's override and the TypeORM default. */
type Slot<T> = [token: InjectionToken, override: McpStoreOverride<T> | undefined, fallback: Type<T>];

function providersOf(slots: Slot<unknown>[]): McpStoreProviders {
  let needsTypeOrm = false;
  const providers = slots.map(([token, override, fallback]): Provider => {
    if (override === undefined || override === null) {
      needsTypeOrm = true;
      return { provide: token, useClass: fallback };
    }
    // A class is a function; an instance of a store never is.
    return typeof override === 'function'
      ? { provide: token, useClass: override as Type<unknown> }
      : { provide: token, useValue: override };
  });
  return { providers, needsTypeOrm };
}

/**
 * The stores of the serving side of a mount (`MCP_SESSION_STORE`, `MCP_SUBSCRIPTION_STORE`,
 * `MCP_EVENT_SINK`, `MCP_HANDLER_SWITCH_STORE`, `MCP_TASK_STORE`): the host's overrides, TypeORM for the rest. The module must also provide
 * `MCP_STORE_SETTINGS`.
 */
export function createMcpServerStoreProviders(overrides: McpServerStoreOverrides = {}): McpStoreProviders {
  return providersOf([
    [MCP_SESSION_STORE, overrides.sessions, TypeOrmSessionStore],
    [MCP_SUBSCRIPTION_STORE, overrides.subscriptions, TypeOrmSubscriptionStore],
    [MCP_EVENT_SINK, overrides.events, TypeOrmEventSink],
    [MCP_HANDLER_SWITCH_STORE, overrides.handlerSwitches, TypeOrmHandlerSwitchStore],
    [MCP_TASK_STORE, overrides.tasks, TypeOrmTaskStore],
  ]);
}

/** The stores of the client (`MCP_OUTBOUND_SESSION_STORE`, `MCP_EVENT_SINK`): the host's overrides, TypeORM for the rest. */
export function createMcpClientStoreProviders(overrides: McpClientStoreOverrides = {}): McpStoreProviders {
  return providersOf([
    [MCP_OUTBOUND_SESSION_STORE, overrides.outboundSessions, TypeOrmOutboundSessionStore],
    [MCP_EVENT_SINK, overrides.events, TypeOrmEventSink],
  ]);
}

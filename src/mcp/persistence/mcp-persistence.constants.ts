import { Inject } from '@nestjs/common';

/** Injection token of a mount's `McpSessionStore` (2025-era inbound sessions). */
export const MCP_SESSION_STORE = 'MCP_SESSION_STORE';

/** Injection token of a mount's `McpSubscriptionStore` (resource subscriptions). */
export const MCP_SUBSCRIPTION_STORE = 'MCP_SUBSCRIPTION_STORE';

/** Injection token of a mount's `McpHandlerSwitchStore` (the handlers `McpRegistry` switched off). */
export const MCP_HANDLER_SWITCH_STORE = 'MCP_HANDLER_SWITCH_STORE';

/** Injection token of the `McpEventSink` that receives the audit rows. */
export const MCP_EVENT_SINK = 'MCP_EVENT_SINK';

/** Injection token of the client's `McpOutboundSessionStore`. */
export const MCP_OUTBOUND_SESSION_STORE = 'MCP_OUTBOUND_SESSION_STORE';

/** Injection token of the `McpStoreSettings` (mount, idle TTL) of a mount's stores. */
export const MCP_STORE_SETTINGS = 'MCP_STORE_SETTINGS';

/** Injects the mount's `McpSessionStore`. */
export const InjectMcpSessionStore = (): ParameterDecorator => Inject(MCP_SESSION_STORE);

/** Injects the mount's `McpSubscriptionStore`. */
export const InjectMcpSubscriptionStore = (): ParameterDecorator => Inject(MCP_SUBSCRIPTION_STORE);

/** Injects the mount's `McpHandlerSwitchStore`. */
export const InjectMcpHandlerSwitchStore = (): ParameterDecorator => Inject(MCP_HANDLER_SWITCH_STORE);

/** Injects the `McpEventSink`. */
export const InjectMcpEventSink = (): ParameterDecorator => Inject(MCP_EVENT_SINK);

/** Injects the client's `McpOutboundSessionStore`. */
export const InjectMcpOutboundSessionStore = (): ParameterDecorator => Inject(MCP_OUTBOUND_SESSION_STORE);

/** Injects the `McpStoreSettings` of the mount's stores. */
export const InjectMcpStoreSettings = (): ParameterDecorator => Inject(MCP_STORE_SETTINGS);

/** Injection token of a mount's `McpTaskStore` (task-augmented tool calls). */
export const MCP_TASK_STORE = 'MCP_TASK_STORE';

/** Injects the mount's `McpTaskStore`. */
export const InjectMcpTaskStore = (): ParameterDecorator => Inject(MCP_TASK_STORE);

/**
 * The transport contract of durable-mcp (the `durable-mcp/transports` entry point): what a custom
 * transport of `McpClientModule` implements, and what in-process delivery to a mount's
 * `Toolset` uses.
 *
 * @packageDocumentation
 */
// Writing a transport: the factory McpClientModule calls, the transport it builds, and the
// builder of the module's `transports` extra.
export { MCP_TRANSPORT_FACTORIES } from '../client/mcp-client.constants';
export { mcpTransports } from '../client/transports/mcp-client-transports';
export type { McpClientTransports, McpTransportFactoryEntry } from '../client/transports/mcp-client-transports';
export type {
  McpTransportFactory,
  McpTransportFactoryContext,
} from '../client/transports/mcp-transport-factory.interface';
export type {
  McpTransport,
  McpTransportContext,
  McpTransportDeliverOptions,
  McpTransportResult,
  McpHandshakeInfo,
  McpServerRequestHandler,
  McpServerNotificationHandler,
  McpNotificationOrigin,
} from '../client/transports/mcp-transport.interface';
export type { McpCustomServerConfig } from '../client/interfaces/mcp-server-config.interface';

// In-process delivery: a mount's Toolset and the context a message is delivered with.
export { Toolset } from '../server/dispatch/toolset';
export type { ToolsetIdentity } from '../server/dispatch/toolset';
export { getMcpToolsetToken, InjectMcpToolset } from '../mcp.constants';
export type { McpDeliveryContext, McpMessageHandler, McpClientChannel } from '../interfaces/mcp-delivery.interface';
export type {
  JsonRpcId,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcSuccess,
  JsonRpcError,
  JsonRpcErrorObject,
  JsonRpcMessage,
} from '../protocol/jsonrpc';

// The root types that the signatures above use.
export type {
  McpServerCommonConfig,
  McpServerScope,
  McpServerVersion,
} from '../client/interfaces/mcp-server-config.interface';
export type { McpInputRequestOptions, McpRoundState, McpTaskContext } from '../interfaces/mcp-tool-context.interface';
export type { McpPrincipal } from '../interfaces/principal.interface';
export type { McpLogLevel } from '../protocol/log-levels';

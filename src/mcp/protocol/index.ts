/**
 * The MCP wire vocabulary of durable-mcp (the `durable-mcp/protocol` entry point): JSON-RPC
 * envelopes, method names and the facts about each method, revisions, the stateless revision's
 * `_meta` keys, headers and error codes, and log levels. Plain TypeScript: no Nest, no TypeORM.
 *
 * @packageDocumentation
 */
export type {
  JsonRpcId,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcSuccess,
  JsonRpcError,
  JsonRpcErrorObject,
  JsonRpcMessage,
} from './jsonrpc';
export { JsonRpcErrorCode, jsonRpcError, jsonRpcResult } from './jsonrpc';
export { McpMethod, McpHeader, TOOL_NAME_PATTERN } from './mcp-methods';
export type { McpMethodName } from './mcp-methods';
export { MCP_METHOD_CATALOG, methodFacts, existsInRevision } from './method-catalog';
export type { McpMethodFacts, McpParty, McpRevisionFamily, McpCapabilityRequirement } from './method-catalog';
export { SESSION_PROTOCOL_VERSIONS, LATEST_SESSION_PROTOCOL_VERSION } from './revisions';
export {
  STATELESS_PROTOCOL_VERSION,
  STATELESS_PROTOCOL_VERSIONS,
  StatelessMetaKey,
  StatelessHeader,
  StatelessErrorCode,
  StatelessRetryParam,
  ResultType,
} from './stateless';
export { MCP_LOG_LEVELS } from './log-levels';
export type { McpLogLevel } from './log-levels';
export { X_MCP_HEADER } from './param-header-annotations';
export { URL_ELICITATION_REQUIRED, declaredElicitationModes, elicitationCapabilityFor } from './elicitation';
export type { McpElicitationMode } from './elicitation';
export { SAMPLING_TOOL_PARAMS, declaresSamplingTools, samplingCapabilityFor, samplingToolParams } from './sampling';
export {
  TERMINAL_TASK_STATUSES,
  MCP_TASK_SUPPORT_VALUES,
  RELATED_TASK_META_KEY,
  isTerminalTaskStatus,
  tasksServerCapability,
} from './tasks';
export type { McpTaskStatus, McpTaskSupport } from './tasks';

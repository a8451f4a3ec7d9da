/**
 * The errors of durable-mcp (the `durable-mcp/errors` entry point): what `McpClientService`
 * rejects with, what a handler throws to answer with a JSON-RPC error or a URL elicitation, and
 * what the module throws at boot or during an outage. Each one's status, code and cause are on
 * the errors page of the docs.
 *
 * @packageDocumentation
 */

// Configuration: refused at boot.
export { McpConfigurationError } from './mcp-configuration.errors';

// Thrown by handlers: a JSON-RPC error of their choice, or a URL elicitation the client must complete.
export { McpRpcError } from './mcp-rpc.errors';
export { McpUrlElicitationRequiredError, McpUnsupportedElicitationModeError } from './mcp-elicitation.errors';
export type { McpRequiredUrlElicitation } from './mcp-elicitation.errors';
export { McpUnsupportedSamplingToolsError } from './mcp-sampling.errors';
export type { McpElicitationMode } from '../protocol/elicitation';
export type { JsonRpcErrorObject } from '../protocol/jsonrpc';

// A handler's request to its client that did not get an answer.
export { McpClientRequestError, McpClientRequestTimeoutError, McpRequestEndedError } from './mcp-client-request.errors';

// Outages and refusals of the module's own infrastructure (answered with 503 on the wire).
export { McpInfrastructureError } from './mcp-infrastructure.errors';
export { McpDatabaseUnavailableError, McpBusUnavailableError } from './mcp-outage.errors';
export { McpEventRejectedError } from './mcp-event-rejected.errors';
export { McpAuthorizationServerError } from '../server/oauth/oauth.errors';

// McpClientService: every rejection of a call is an McpClientError.
export {
  McpClientError,
  McpTimeoutError,
  McpTransportError,
  McpProtocolError,
  McpServerError,
} from './mcp-client.errors';
export {
  McpCapabilityError,
  McpUnknownServerError,
  McpToolNotFoundError,
  McpAmbiguousToolError,
  McpInvalidToolError,
  McpCallInterruptedError,
  McpCallNotFoundError,
} from './mcp-client-call.errors';
export { McpInputRequiredError } from './mcp-input-required.errors';
export { McpQueueUnavailableError, McpCallWaitTimeoutError } from './mcp-outage.errors';
export { McpCallAbortedError } from '../client/mcp-call-aborted.errors';
export { McpTaskNotSupportedError } from '../client/mcp-task-call.errors';

// The client's outbound OAuth.
export {
  McpOAuthClientError,
  McpOAuthScopeLimitError,
  McpUntrustedAuthorizationServerError,
  McpAuthorizationRequiredError,
} from '../client/auth/oauth-client.errors';
export type { McpAuthorizationRequiredReason } from '../client/auth/oauth-client.errors';
export { McpOAuthCallbackError } from '../client/auth/authorization-code/oauth-callback.errors';

import {
  McpAmbiguousToolError,
  McpCallInterruptedError,
  McpCallNotFoundError,
  McpCapabilityError,
  McpInvalidToolError,
  McpToolNotFoundError,
  McpUnknownServerError,
} from '../../errors/mcp-client-call.errors';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import {
  McpAuthorizationRequiredError,
  McpOAuthClientError,
  McpOAuthScopeLimitError,
  McpUntrustedAuthorizationServerError,
} from '../auth/oauth-client.errors';
import { McpCallAbortedError } from '../mcp-call-aborted.errors';
import { McpTaskNotSupportedError } from '../mcp-task-call.errors';
import {
  McpClientError,
  McpProtocolError,
  McpServerError,
  McpTimeoutError,
  McpTransportError,
} from '../../errors/mcp-client.errors';

/** A call failure as it travels through Redis (Bull job data) to the process that waits for it. */
export interface EncodedCallError {
  name: string;
  message: string;
  delivered: boolean;
  fields: Record<string, unknown>;
  /** The outbound OAuth error behind a transport failure, so a caller can tell what to configure. */
  cause?: { name: string; message: string; fields?: Record<string, unknown> };
}

/** The `cause` classes that travel with a failure: those of outbound OAuth, whose messages hold no secret. */
const CAUSES: Record<string, (message: string, fields: Record<string, unknown>) => Error> = {
  McpOAuthClientError: (message) => new McpOAuthClientError(message),
  McpUntrustedAuthorizationServerError: (message) => new McpUntrustedAuthorizationServerError(message),
  McpOAuthScopeLimitError: (message) => new McpOAuthScopeLimitError(message),
  McpAuthorizationRequiredError: (message, f) =>
    new McpAuthorizationRequiredError(
      String(f.server),
      String(f.scopeKey),
      f.reason as McpAuthorizationRequiredError['reason'],
      message,
    ),
};

/** The typed fields each error class carries beyond its message. */
const FIELDS = [
  'code',
  'data',
  'error',
  'timeoutMs',
  'status',
  'server',
  'capability',
  'method',
  'known',
  'tool',
  'servers',
  'unreachable',
  'callId',
  'reason',
  'operation',
];

/** Turns any failure into plain JSON, keeping the class name and its typed fields. */
export function encodeCallError(error: unknown): EncodedCallError {
  const source = (error instanceof Error ? error : new Error(String(error))) as Error & Record<string, unknown>;
  const fields = Object.fromEntries(FIELDS.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]));
  const delivered = error instanceof McpClientError ? error.delivered : true;
  const encoded: EncodedCallError = { name: source.name, message: source.message, delivered, fields };
  if (source.cause instanceof McpOAuthClientError && CAUSES[source.cause.name]) {
    encoded.cause = { name: source.cause.name, message: source.cause.message };
    if (source.cause instanceof McpAuthorizationRequiredError) {
      const { server, scopeKey, reason } = source.cause;
      encoded.cause.fields = { server, scopeKey, reason };
    }
  }
  return encoded;
}

type Fields = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded JSON, one shape per error class

// The fields are the ones `encodeCallError` took from an error of the same class, so each factory passes
// them back to that class's constructor as they are.
/* eslint-disable @typescript-eslint/no-unsafe-argument -- see above */
const FACTORIES: Record<string, (e: EncodedCallError, f: Fields) => Error> = {
  McpServerError: (_e, f) => new McpServerError(f.error),
  McpTimeoutError: (e, f) => new McpTimeoutError(e.message, e.delivered, f.timeoutMs),
  McpTransportError: (e, f) => new McpTransportError(e.message, e.delivered, f.status),
  McpProtocolError: (e) => new McpProtocolError(e.message, e.delivered),
  McpCapabilityError: (_e, f) => new McpCapabilityError(f.server, f.capability, f.method),
  McpUnknownServerError: (_e, f) => new McpUnknownServerError(f.server, f.known ?? []),
  McpToolNotFoundError: (_e, f) => new McpToolNotFoundError(f.tool, f.unreachable ?? []),
  McpAmbiguousToolError: (_e, f) => new McpAmbiguousToolError(f.tool, f.servers ?? []),
  McpCallInterruptedError: (_e, f) => new McpCallInterruptedError(f.callId),
  McpCallNotFoundError: (_e, f) => new McpCallNotFoundError(f.callId),
  McpInvalidToolError: (_e, f) => new McpInvalidToolError(f.server, f.tool, f.reason),
  McpInputRequiredError: (e, f) => new McpInputRequiredError(e.message, f.server, f.method),
  McpQueueUnavailableError: (e, f) => new McpQueueUnavailableError(f.operation, f.reason, e.delivered),
  McpCallWaitTimeoutError: (_e, f) => new McpCallWaitTimeoutError(f.callId, f.timeoutMs),
  McpCallAbortedError: (e, f) => new McpCallAbortedError(f.server, f.method, e.delivered, f.reason),
  McpTaskNotSupportedError: (_e, f) => new McpTaskNotSupportedError(f.server, f.tool),
};
/* eslint-enable @typescript-eslint/no-unsafe-argument */

/**
 * Rebuilds the typed error of an encoded failure. An unknown class (a database error in the
 * worker, a bug) comes back as a plain `Error` with the worker's message.
 */
export function decodeCallError(encoded: EncodedCallError): Error {
  const factory = FACTORIES[encoded.name];
  if (!factory) {
    const error = new Error(encoded.message);
    error.name = encoded.name;
    return error;
  }
  const error = factory(encoded, encoded.fields);
  error.message = encoded.message;
  const Cause = encoded.cause ? CAUSES[encoded.cause.name] : undefined;
  if (Cause && encoded.cause) error.cause = Cause(encoded.cause.message, encoded.cause.fields ?? {});
  return error;
}

import {
  McpAmbiguousToolError,
  McpCallInterruptedError,
  McpCallNotFoundError,
  McpCapabilityError,
  McpInvalidToolError,
  McpToolNotFoundError,
  McpUnknownServerError,
} from '../../errors/mcp-client-call.errors';
import * as errors from '../../errors';
import { McpAuthorizationRequiredError } from '../auth/oauth-client.errors';
import {
  McpClientError,
  McpProtocolError,
  McpServerError,
  McpTimeoutError,
  McpTransportError,
} from '../../errors/mcp-client.errors';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import {
  McpOAuthClientError,
  McpOAuthScopeLimitError,
  McpUntrustedAuthorizationServerError,
} from '../auth/oauth-client.errors';
import { McpCallAbortedError } from '../mcp-call-aborted.errors';
import { McpTaskNotSupportedError } from '../mcp-task-call.errors';
import { decodeCallError, encodeCallError } from './call-error-codec';

/** Through Bull the encoded failure is stored as JSON in Redis: round-trip it the same way. */
function throughRedis(error: unknown): Error {
  return decodeCallError(JSON.parse(JSON.stringify(encodeCallError(error))));
}

describe('the Bull call-error codec', () => {
  const cases: Array<[string, Error, string[]]> = [
    [
      'McpServerError',
      new McpServerError({ code: -32602, message: 'Invalid params', data: { field: 'x' } }),
      ['code', 'data', 'error'],
    ],
    ['McpTimeoutError delivered', new McpTimeoutError('tools/call timed out', true, 3000), ['timeoutMs']],
    ['McpTimeoutError undelivered', new McpTimeoutError('spawn timed out', false, 1500), ['timeoutMs']],
    ['McpTransportError with status', new McpTransportError('HTTP 502', true, 502), ['status']],
    ['McpTransportError refused', new McpTransportError('connect ECONNREFUSED', false), []],
    ['McpProtocolError', new McpProtocolError('not JSON-RPC', true), []],
    [
      'McpCapabilityError',
      new McpCapabilityError('files', 'prompts', 'prompts/list'),
      ['server', 'capability', 'method'],
    ],
    ['McpUnknownServerError', new McpUnknownServerError('nope', ['a', 'b']), ['server', 'known']],
    ['McpToolNotFoundError', new McpToolNotFoundError('shout', ['down']), ['tool', 'unreachable']],
    ['McpAmbiguousToolError', new McpAmbiguousToolError('echo', ['a', 'b']), ['tool', 'servers']],
    ['McpCallInterruptedError', new McpCallInterruptedError('42'), ['callId']],
    ['McpCallNotFoundError', new McpCallNotFoundError('43'), ['callId']],
    [
      'McpInvalidToolError',
      new McpInvalidToolError('remote', 'bad', 'x-mcp-header on a number'),
      ['server', 'tool', 'reason'],
    ],
    ['McpInputRequiredError', new McpInputRequiredError('asked 9 times', 'remote', 'tools/call'), ['server', 'method']],
    [
      'McpQueueUnavailableError',
      new McpQueueUnavailableError('at-most-once mark', 'the connection to Redis is closed'),
      ['operation', 'reason'],
    ],
    [
      'McpQueueUnavailableError delivered',
      new McpQueueUnavailableError('wait', 'the connection dropped', true),
      ['operation', 'reason'],
    ],
    ['McpCallWaitTimeoutError', new McpCallWaitTimeoutError('44', 600_000), ['callId', 'timeoutMs']],
    [
      'McpCallAbortedError queued',
      new McpCallAbortedError('remote', 'tools/call', false, 'user left'),
      ['server', 'method', 'reason'],
    ],
    ['McpCallAbortedError sent', new McpCallAbortedError('remote', 'tools/call', true), ['server', 'method']],
    ['McpTaskNotSupportedError', new McpTaskNotSupportedError('remote', 'render'), ['server', 'tool']],
  ];

  it.each(cases)(
    '%s comes back as the same class with its message, fields and delivered flag',
    (_label, original, fields) => {
      const decoded = throughRedis(original) as unknown as Record<string, unknown>;
      expect(decoded).toBeInstanceOf(original.constructor);
      expect(decoded.name).toBe(original.name);
      expect(decoded.message).toBe(original.message);
      expect(decoded.delivered).toBe((original as unknown as { delivered: boolean }).delivered);
      for (const field of fields)
        expect(decoded[field]).toEqual((original as unknown as Record<string, unknown>)[field]);
    },
  );

  it('keeps the outbound OAuth error behind a transport failure as its cause', () => {
    for (const Cause of [McpUntrustedAuthorizationServerError, McpOAuthScopeLimitError, McpOAuthClientError]) {
      const original = new McpTransportError('Could not get an access token for https://a.example/mcp: ...', false);
      original.cause = new Cause('names the authorization server https://evil.example');
      const decoded = throughRedis(original);
      expect(decoded.cause).toBeInstanceOf(Cause);
      expect((decoded.cause as Error).name).toBe(Cause.name);
      expect((decoded.cause as Error).message).toBe('names the authorization server https://evil.example');
    }
    const other = new McpTransportError('HTTP 502', true, 502);
    other.cause = new Error('socket hang up');
    expect(throughRedis(other).cause).toBeUndefined();
  });

  it('keeps who must authorize, and why, when the cause is McpAuthorizationRequiredError', () => {
    const original = new McpTransportError('Could not get an access token for https://a.example/mcp: ...', false);
    const cause = new McpAuthorizationRequiredError('crm', 'alice', 'revoked');
    original.cause = cause;
    const decoded = throughRedis(original);
    expect(decoded.cause).toBeInstanceOf(McpAuthorizationRequiredError);
    expect(McpAuthorizationRequiredError.of(decoded)).toMatchObject({
      server: 'crm',
      scopeKey: 'alice',
      reason: 'revoked',
      message: cause.message,
    });
    expect(McpAuthorizationRequiredError.of(new Error('other'))).toBeNull();
  });

  it('covers every McpClientError class the package exports', () => {
    const exported: unknown[] = Object.values(errors).filter(
      (value) => typeof value === 'function' && value.prototype instanceof McpClientError,
    );
    expect(new Set<unknown>(cases.map(([, error]) => error.constructor))).toEqual(new Set(exported));
  });

  it('brings an unknown failure back as a plain Error with its name and message, counted as delivered', () => {
    const failure = Object.assign(new Error('relation "mcp_events" does not exist'), { name: 'QueryFailedError' });
    const encoded = encodeCallError(failure);
    expect(encoded.delivered).toBe(true);
    const decoded = decodeCallError(JSON.parse(JSON.stringify(encoded)));
    expect(decoded.constructor).toBe(Error);
    expect(decoded).toMatchObject({ name: 'QueryFailedError', message: 'relation "mcp_events" does not exist' });
  });

  it('encodes a thrown non-Error as a delivered Error with its text', () => {
    expect(encodeCallError('boom')).toEqual({ name: 'Error', message: 'boom', delivered: true, fields: {} });
  });
});

describe('encodeCallError', () => {
  it('keeps only the typed fields the error has, so the job data carries nothing else', () => {
    expect(encodeCallError(new McpTransportError('bad gateway', true, 502))).toEqual({
      name: 'McpTransportError',
      message: 'bad gateway',
      delivered: true,
      fields: { status: 502 },
    });
    expect(encodeCallError(new Error('plain'))).toEqual({
      name: 'Error',
      message: 'plain',
      delivered: true,
      fields: {},
    });
  });
});

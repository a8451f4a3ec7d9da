import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import { McpCallAbortedError } from '../mcp-call-aborted.errors';
import { McpTaskNotSupportedError } from '../mcp-task-call.errors';
import * as errors from '../../errors';
import {
  McpAmbiguousToolError,
  McpCallInterruptedError,
  McpCallNotFoundError,
  McpCapabilityError,
  McpInvalidToolError,
  McpToolNotFoundError,
  McpUnknownServerError,
} from '../../errors/mcp-client-call.errors';
import {
  McpClientError,
  McpProtocolError,
  McpServerError,
  McpTimeoutError,
  McpTransportError,
} from '../../errors/mcp-client.errors';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import { McpAuthorizationRequiredError } from '../auth/oauth-client.errors';
import { backoffDelay, isRetryable, retryStartsInTime } from './retry-policy';

const delivered = new McpTransportError('reset after sending', true);
const neverSent = new McpTransportError('connection refused', false);
const timedOutAfterSending = new McpTimeoutError('no answer', true, 1000);

describe('isRetryable', () => {
  it('retries tools/call only when the failure proves it never reached the server', () => {
    expect(isRetryable('tools/call', neverSent)).toBe(true);
    expect(isRetryable('tools/call', new McpTimeoutError('no answer', false, 1000))).toBe(true);
    expect(isRetryable('tools/call', delivered)).toBe(false);
    expect(isRetryable('tools/call', timedOutAfterSending)).toBe(false);
    expect(isRetryable('tools/call', new Error('worker crashed'))).toBe(false);
  });

  it.each(['tools/list', 'prompts/get', 'resources/read', 'completion/complete', 'ping', 'some/custom'])(
    'retries %s after a delivered failure too',
    (method) => {
      expect(isRetryable(method, delivered)).toBe(true);
      expect(isRetryable(method, timedOutAfterSending)).toBe(true);
      expect(isRetryable(method, new Error('worker crashed'))).toBe(true);
    },
  );

  it('never retries a call whose user must authorize first, even one that never reached the server', () => {
    const required = Object.assign(new McpTransportError('authorization required', false), {
      cause: new McpAuthorizationRequiredError('crm', 'alice', 'none'),
    });
    expect(isRetryable('tools/call', required)).toBe(false);
    expect(isRetryable('tools/list', required)).toBe(false);
    expect(isRetryable('tools/list', new McpAuthorizationRequiredError('crm', 'alice', 'revoked'))).toBe(false);
  });

  it('never retries other client errors (JSON-RPC, protocol, capability refusals)', () => {
    expect(isRetryable('tools/list', new McpProtocolError('garbage', true))).toBe(false);
    expect(isRetryable('tools/call', new McpProtocolError('garbage', false))).toBe(false);
  });
});

/**
 * Every error class a call can fail with, crossed with the delivery state (where the class has
 * one) and with the kind of method: `tools/call` (not idempotent) and `tools/list` (idempotent).
 * The expected verdict is written out row by row, not derived from the code under test.
 */
describe('isRetryable over every error class, delivery state and method kind', () => {
  type Row = [label: string, delivered: boolean | null, toolsCall: boolean, toolsList: boolean, error: unknown];
  const rows: Row[] = [
    ['McpTimeoutError', true, false, true, new McpTimeoutError('timed out', true, 1000)],
    ['McpTimeoutError', false, true, true, new McpTimeoutError('spawn timed out', false, 1000)],
    ['McpTransportError', true, false, true, new McpTransportError('HTTP 500', true, 500)],
    ['McpTransportError', false, true, true, new McpTransportError('connect ECONNREFUSED', false)],
    ['McpProtocolError', true, false, false, new McpProtocolError('not JSON-RPC', true)],
    ['McpProtocolError', false, false, false, new McpProtocolError('bad handshake', false)],
    ['McpServerError', true, false, false, new McpServerError({ code: -32602, message: 'Invalid params' })],
    ['McpCapabilityError', false, false, false, new McpCapabilityError('files', 'tools', 'tools/call')],
    ['McpUnknownServerError', false, false, false, new McpUnknownServerError('nope', ['a'])],
    ['McpToolNotFoundError', false, false, false, new McpToolNotFoundError('shout', ['down'])],
    ['McpAmbiguousToolError', false, false, false, new McpAmbiguousToolError('echo', ['a', 'b'])],
    ['McpInvalidToolError', false, false, false, new McpInvalidToolError('remote', 'bad', 'x-mcp-header on a number')],
    ['McpCallInterruptedError', true, false, false, new McpCallInterruptedError('42')],
    ['McpCallNotFoundError', false, false, false, new McpCallNotFoundError('43')],
    ['McpInputRequiredError', true, false, false, new McpInputRequiredError('asked 9 times', 'remote', 'tools/call')],
    // The queue itself unavailable: a worker cannot retry without Redis; the caller decides.
    [
      'McpQueueUnavailableError',
      false,
      false,
      false,
      new McpQueueUnavailableError('at-most-once mark', 'the connection is closed'),
    ],
    ['McpCallWaitTimeoutError', true, false, false, new McpCallWaitTimeoutError('45', 600_000)],
    // The caller gave up: never sent again, whether it reached the server or not.
    ['McpCallAbortedError', false, false, false, new McpCallAbortedError('remote', 'tools/call', false)],
    ['McpCallAbortedError', true, false, false, new McpCallAbortedError('remote', 'tools/call', true)],
    ['McpTaskNotSupportedError', false, false, false, new McpTaskNotSupportedError('remote', 'render')],
    ['plain Error', null, false, true, new Error('worker crashed')],
  ];

  it.each(rows)(
    '%s (delivered: %s): retried on tools/call %s, on tools/list %s',
    (_label, delivered, toolsCall, toolsList, error) => {
      if (delivered !== null) expect((error as McpClientError).delivered).toBe(delivered);
      expect(isRetryable('tools/call', error)).toBe(toolsCall);
      expect(isRetryable('tools/list', error)).toBe(toolsList);
    },
  );

  it('the table covers every McpClientError class the package exports, with both delivery states for timeouts and transport errors', () => {
    const exported = (Object.values(errors) as unknown[]).filter(
      (value): value is new (...args: never[]) => Error =>
        typeof value === 'function' && value.prototype instanceof McpClientError,
    );
    const covered = new Set(rows.map(([, , , , error]) => (error as Error).constructor));
    covered.delete(Error);
    expect(covered).toEqual(new Set(exported));
    for (const cls of [McpTimeoutError, McpTransportError, McpProtocolError]) {
      const states = rows.filter(([, , , , error]) => error instanceof cls).map(([, state]) => state);
      expect(states.sort()).toEqual([false, true]);
    }
  });
});

describe('backoffDelay', () => {
  it('waits backoffMs before the second attempt and doubles it for each one after', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(100, attempt))).toEqual([100, 200, 400, 800]);
  });

  it('never waits less than backoffMs, whatever attempt number it is given', () => {
    expect(backoffDelay(100, 0)).toBe(100);
    expect(backoffDelay(100, -3)).toBe(100);
  });

  it('never waits with a zero backoff', () => {
    expect(backoffDelay(0, 5)).toBe(0);
  });
});

describe('retryStartsInTime', () => {
  const now = 1_000_000;
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(now));
  afterEach(() => jest.restoreAllMocks());

  it('always retries a call without a deadline', () => {
    expect(retryStartsInTime({}, Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('retries only when the retry would start strictly before the deadline', () => {
    expect(retryStartsInTime({ deadlineAt: now + 500 }, 499)).toBe(true);
    expect(retryStartsInTime({ deadlineAt: now + 500 }, 500)).toBe(false);
    expect(retryStartsInTime({ deadlineAt: now + 500 }, 501)).toBe(false);
  });

  it('does not retry a call whose deadline already passed, even at once', () => {
    expect(retryStartsInTime({ deadlineAt: now - 1 }, 0)).toBe(false);
    expect(retryStartsInTime({ deadlineAt: now }, 0)).toBe(false);
  });
});

import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import { isRetryable } from './retry-policy';

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

  it.each(['tools/list', 'prompts/get', 'resources/read', 'completion/complete', 'ping', 'some/custom'])('retries %s after a delivered failure too', (method) => {
    expect(isRetryable(method, delivered)).toBe(true);
    expect(isRetryable(method, timedOutAfterSending)).toBe(true);
    expect(isRetryable(method, new Error('worker crashed'))).toBe(true);
  });

  it('never retries other client errors (JSON-RPC, protocol, capability refusals)', () => {
    expect(isRetryable('tools/list', new McpProtocolError('garbage', true))).toBe(false);
    expect(isRetryable('tools/call', new McpProtocolError('garbage', false))).toBe(false);
  });
});

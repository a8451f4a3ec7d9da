import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../../errors/mcp-client.errors';
import { HttpCall } from './http-call';

const context = (extra: Record<string, unknown> = {}) => ({ server: 'h', scopeKey: '', timeoutMs: 60_000, ...extra });

describe('HttpCall', () => {
  it('has no deadline of its own without a finite positive timeout or deadline', () => {
    for (const timeoutMs of [0, -1, Infinity, Number.NaN]) {
      const call = new HttpCall(context({ timeoutMs }));
      expect(call.stopped).toBe(false);
      call.dispose();
    }
  });

  it('stops at once when the caller already aborted, and tells the caller it was aborted', () => {
    const caller = new AbortController();
    caller.abort();
    const call = new HttpCall(context({ signal: caller.signal }));
    expect(call.signal.aborted).toBe(true);
    const error = call.stopError();
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ message: 'The call to MCP server "h" was aborted by the caller', delivered: false });
    expect(call.cancelReason()).toBe('Cancelled by the caller');
    call.dispose();
  });

  it('stops when the caller aborts later; the first reason to stop wins', () => {
    const caller = new AbortController();
    const call = new HttpCall(context({ signal: caller.signal }));
    call.maybeDelivered = true;
    caller.abort();
    call.fail(new McpProtocolError('too late', true));
    expect(call.stopError()).toMatchObject({
      message: 'The call to MCP server "h" was aborted by the caller',
      delivered: true,
    });
    call.dispose();
  });

  it('stops with the failure it was given, and names it in the cancel reason', () => {
    const call = new HttpCall(context());
    const failure = new McpProtocolError('broken stream', true);
    call.fail(failure);
    expect(call.stopped).toBe(true);
    expect(call.stopError()).toBe(failure);
    expect(call.cancelReason()).toBe('The client could not continue the request');
    call.dispose();
  });

  it('times out at a deadline already past, saying whether the message may have arrived', async () => {
    const call = new HttpCall(context({ timeoutMs: 5000, deadlineAt: Date.now() - 1 }));
    await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(call.stopError()).toEqual(
      new McpTimeoutError('MCP server "h" could not be reached within 5000 ms', false, 5000),
    );
    call.maybeDelivered = true;
    expect(call.stopError().message).toBe('MCP server "h" did not answer within 5000 ms');
    expect(call.cancelReason()).toBe('Timed out after 5000 ms');
    call.dispose();
  });
});

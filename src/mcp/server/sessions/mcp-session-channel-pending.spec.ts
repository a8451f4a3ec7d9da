import { McpClientRequestError, McpClientRequestTimeoutError } from '../../errors/mcp-client-request.errors';
import { McpPendingClientRequests } from './mcp-session-channel-pending';
import { acceptsEventStream } from './mcp-sse-writer';

describe('McpPendingClientRequests', () => {
  it('hands out ids unique to the process and resolves the wait with the answer of the same session', async () => {
    const pending = new McpPendingClientRequests();
    const id = pending.nextId();
    expect(pending.nextId()).not.toBe(id);
    const answer = pending.wait('s1', id, 'elicitation/create', 7, 60_000);
    expect(pending.settle('s2', { jsonrpc: '2.0', id, result: { action: 'decline' } })).toBe(false);
    expect(pending.settle('s1', { jsonrpc: '2.0', id, result: { action: 'accept' } })).toBe(true);
    await expect(answer).resolves.toEqual({ action: 'accept' });
    expect(pending.size).toBe(0);
  });

  it('rejects with McpClientRequestError on an error answer and with McpClientRequestTimeoutError when none comes', async () => {
    const pending = new McpPendingClientRequests();
    const refused = pending.wait('s', 'a', 'sampling/createMessage', 1, 60_000);
    pending.settle('s', { jsonrpc: '2.0', id: 'a', error: { code: -1, message: 'no' } });
    await expect(refused).rejects.toBeInstanceOf(McpClientRequestError);
    await expect(pending.wait('s', 'b', 'roots/list', 1, 5)).rejects.toBeInstanceOf(McpClientRequestTimeoutError);
    expect(pending.size).toBe(0);
  });

  it('rejects the waits of a cancelled call and of an aborted signal', async () => {
    const pending = new McpPendingClientRequests();
    const cancelled = pending.wait('s', 'a', 'elicitation/create', 'call-1', 60_000);
    const other = pending.wait('s', 'b', 'elicitation/create', 'call-2', 60_000);
    pending.cancelCall('s', 'call-1', 'changed my mind');
    await expect(cancelled).rejects.toThrow('changed my mind');
    const abort = new AbortController();
    const aborted = pending.wait('s', 'c', 'elicitation/create', 'call-3', 60_000, abort.signal);
    abort.abort(new Error('stream closed'));
    await expect(aborted).rejects.toThrow('stream closed');
    pending.settle('s', { jsonrpc: '2.0', id: 'b', result: {} });
    await expect(other).resolves.toEqual({});
  });
});

describe('SSE helpers', () => {
  it('offers a stream only to clients that name text/event-stream', () => {
    expect(acceptsEventStream('application/json, text/event-stream')).toBe(true);
    expect(acceptsEventStream('*/*')).toBe(false);
    expect(acceptsEventStream('application/json')).toBe(false);
    expect(acceptsEventStream(undefined)).toBe(false);
  });
});

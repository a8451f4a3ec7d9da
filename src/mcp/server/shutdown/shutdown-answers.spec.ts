import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc';
import { DRAIN_ABORT_GRACE_MS, McpDrainService } from './mcp-drain.service';
import { abortedAtShutdown } from './shutdown-answers';

const request: JsonRpcRequest = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow' } };
const notification: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/progress' };
const never = new Promise<JsonRpcResponse | null>(() => undefined);

describe('abortedAtShutdown', () => {
  afterEach(() => jest.useRealTimers());

  /** A drain with one request in flight, and a function that runs it past its deadline and grace. */
  function drainWithOneRequest() {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 100, 0);
    const inFlight = service.enter('m');
    void service.drain();
    return { inFlight, pastGrace: () => jest.advanceTimersByTimeAsync(100 + DRAIN_ABORT_GRACE_MS) };
  }

  it('is the work itself outside the drain', () => {
    const work = Promise.resolve(null);
    expect(abortedAtShutdown(null, request, work)).toBe(work);
  });

  it('answers a request the handler never finishes with an internal error once forced', async () => {
    const { inFlight, pastGrace } = drainWithOneRequest();
    const answer = abortedAtShutdown(inFlight, request, never);
    await pastGrace();
    await expect(answer).resolves.toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32603, message: 'The server shut down before the request finished: it was aborted' },
    });
    inFlight.leave();
  });

  it('answers nothing for a forced notification', async () => {
    const { inFlight, pastGrace } = drainWithOneRequest();
    const answer = abortedAtShutdown(inFlight, notification, never);
    await pastGrace();
    await expect(answer).resolves.toBeNull();
    inFlight.leave();
  });

  it("keeps the handler's own answer or failure when it comes first", async () => {
    const { inFlight, pastGrace } = drainWithOneRequest();
    const own: JsonRpcResponse = { jsonrpc: '2.0', id: 7, result: { content: [] } };
    await expect(abortedAtShutdown(inFlight, request, Promise.resolve(own))).resolves.toBe(own);
    const failure = new Error('database down');
    await expect(abortedAtShutdown(inFlight, request, Promise.reject(failure))).rejects.toBe(failure);
    await pastGrace();
    inFlight.leave();
  });
});

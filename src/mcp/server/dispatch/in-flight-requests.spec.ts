import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { InFlightRequests } from './in-flight-requests';

/** A delivery context of a caller in `sessionId` (null: a stateless caller). */
function caller(sessionId: string | null): McpDeliveryContext {
  return { principal: { key: 'alice', label: 'alice' } as never, sessionId, protocolVersion: '2025-11-25' };
}

function call(id: string | number): JsonRpcRequest {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait' } };
}

/** Runs a handler that waits until released; resolves the handler's context once it runs. */
function start(requests: InFlightRequests, id: string | number, sessionId: string | null) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let context!: McpToolContext;
  const done = requests.run(call(id), caller(sessionId), async (handlerContext) => {
    context = handlerContext;
    await released;
    return handlerContext.signal.aborted;
  });
  return { release, done, context: () => context };
}

describe('InFlightRequests', () => {
  it('cancels the running request of that session and id only, and forgets it once it ended', async () => {
    const requests = new InFlightRequests('default');
    const mine = start(requests, 7, 's-1');
    const other = start(requests, 7, 's-2');
    const text = start(requests, '7', 's-1');
    expect(requests.size).toBe(3);

    requests.cancel('s-1', 7, 'the user gave up');
    expect(mine.context().signal.aborted).toBe(true);
    expect((mine.context().signal.reason as Error).message).toBe('the user gave up');
    expect(other.context().signal.aborted).toBe(false);
    expect(text.context().signal.aborted).toBe(false);

    for (const request of [mine, other, text]) request.release();
    await expect(Promise.all([mine.done, other.done, text.done])).resolves.toEqual([true, false, false]);
    expect(requests.size).toBe(0);
    requests.cancel('s-2', 7, 'too late');
    expect(other.context().signal.aborted).toBe(false);
  });

  it('cancels the request registered last when two stateless callers use the same id, and the other after it ended', async () => {
    const requests = new InFlightRequests('default');
    const first = start(requests, 1, null);
    const second = start(requests, 1, null);

    requests.cancel(null, 1, 'stop');
    expect(second.context().signal.aborted).toBe(true);
    expect(first.context().signal.aborted).toBe(false);
    second.release();
    await second.done;

    requests.cancel(null, 1, 'stop too');
    expect(first.context().signal.aborted).toBe(true);
    first.release();
    await first.done;
    expect(requests.size).toBe(0);
  });
});

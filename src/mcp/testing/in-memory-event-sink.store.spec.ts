import { JsonText } from '../persistence/json-text';
import { InMemoryMcpEventSink } from './in-memory-event-sink.store';

describe('InMemoryMcpEventSink', () => {
  it('keeps every row in order, with the defaults and a fresh id', async () => {
    const sink = new InMemoryMcpEventSink();
    const createdAt = new Date();
    await sink.record({
      direction: 'inbound',
      kind: 'request',
      createdAt,
      durationMs: 3,
      mount: 'default',
      method: 'ping',
    });
    await sink.record({ direction: 'outbound', kind: 'notification', createdAt, durationMs: 1, server: 'remote' });
    expect(sink.events).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        createdAt,
        direction: 'inbound',
        kind: 'request',
        durationMs: 3,
        mount: 'default',
        server: null,
        sessionRef: null,
        principalKey: null,
        method: 'ping',
        protocolVersion: null,
        request: null,
        response: null,
        status: null,
        errorCode: null,
        isError: false,
        note: null,
        traceId: null,
      },
      expect.objectContaining({ direction: 'outbound', kind: 'notification', server: 'remote', mount: null }),
    ]);
    expect(sink.events[0].id).not.toBe(sink.events[1].id);
  });

  it('keeps a given trace id, drops one that is not 32 hex characters, and leaves it null with no span', async () => {
    const sink = new InMemoryMcpEventSink();
    const base = { direction: 'inbound' as const, kind: 'request', createdAt: new Date(), durationMs: 0 };
    await sink.record({ ...base, traceId: '0af7651916cd43dd8448eb211c80319c' });
    await sink.record({ ...base, traceId: 'not-a-trace-id' });
    await sink.record({ ...base, traceId: '00000000000000000000000000000000' });
    await sink.record(base);
    expect(sink.events.map((row) => row.traceId)).toEqual(['0af7651916cd43dd8448eb211c80319c', null, null, null]);
  });

  it('stores envelopes as JSON values, whether given as JSON text or as objects', async () => {
    const sink = new InMemoryMcpEventSink();
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } };
    await sink.record({
      direction: 'inbound',
      kind: 'request',
      createdAt: new Date(),
      durationMs: 0,
      request: new JsonText(JSON.stringify(message)),
      response: { jsonrpc: '2.0', id: 1, result: { content: [] } },
    });
    message.params.name = 'changed later';
    expect(sink.events[0].request).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
    expect(sink.events[0].response).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [] } });
  });
});

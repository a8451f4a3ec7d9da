import { McpTimeoutError, McpTransportError } from '../../src/mcp/errors/mcp-client.errors';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import type { StdioTransportOptions } from '../../src/mcp/client/transports/stdio/stdio.options';
import {
  call,
  context,
  isAlive,
  pidRecorder,
  rawServer,
  sdkServer,
  toolCall,
  waitUntil,
} from '../fixtures/stdio/stdio-test-kit';

describe('StdioTransport pooled mode', () => {
  const spawned = pidRecorder();
  const transports: StdioTransport[] = [];

  function pooled(
    options: Partial<StdioTransportOptions> & { pool?: StdioTransportOptions['pool'] } = {},
  ): StdioTransport {
    const transport = new StdioTransport({
      command: sdkServer(),
      stateless: true,
      pool: { max: 2, idleMs: 30_000 },
      closeGraceMs: 300,
      killGraceMs: 300,
      onSpawn: spawned.onSpawn,
      ...options,
    });
    transports.push(transport);
    return transport;
  }

  afterAll(async () => {
    await Promise.all(transports.map((transport) => transport.close()));
    expect(spawned.pids.filter(isAlive)).toEqual([]);
  });

  it('reuses one warm process; the handshake is reported on the call that spawned it', async () => {
    const transport = pooled();
    const first = await call(transport, toolCall('whoami'));
    const second = await call(transport, toolCall('add', { a: 1, b: 2 }));
    const third = await call(transport, toolCall('whoami'));
    expect(third.result.structuredContent.pid).toBe(first.result.structuredContent.pid);
    expect(second.result.structuredContent).toEqual({ sum: 3 });
    expect(first.delivery.handshake?.serverInfo).toEqual({ name: 'stdio-fixture', version: '1.2.3' });
    expect(first.delivery.stderr).toContain('stdio-fixture ready');
    expect(second.delivery.handshake).toBeUndefined();
    expect(second.delivery.stderr).toBe('');
    expect(isAlive(first.result.structuredContent.pid)).toBe(true);
    expect(transport.processCount).toBe(1);
  });

  it('runs one request per process, at most max processes', async () => {
    const transport = pooled({ command: rawServer(), pool: { max: 2, idleMs: 30_000 } });
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map(() => call(transport, toolCall('inflight'))));
    expect(results.map((r) => r.result.structuredContent.concurrent)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(new Set(results.map((r) => r.result.structuredContent.pid)).size).toBe(2);
    expect(transport.processCount).toBe(2);
  });

  it('replaces a process that crashed during a call', async () => {
    const transport = pooled({ command: rawServer() });
    const before = await call(transport, toolCall('info'));
    const crashedPid = before.result.structuredContent.pid as number;
    const failed = transport.deliver(toolCall('crash'), { sessionId: null, context: context() });
    await expect(failed).rejects.toBeInstanceOf(McpTransportError);
    await expect(failed).rejects.toMatchObject({ delivered: true, pid: crashedPid });
    expect(isAlive(crashedPid)).toBe(false);
    const after = await call(transport, toolCall('info'));
    expect(after.result.structuredContent.pid).not.toBe(crashedPid);
    expect(after.delivery.handshake).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'raw-fixture' },
      capabilities: { tools: {} },
    });
  });

  it('kills and replaces a process that timed out', async () => {
    const transport = pooled({ command: rawServer() });
    const before = await call(transport, toolCall('info'));
    const hungPid = before.result.structuredContent.pid as number;
    const failed = transport.deliver(toolCall('hang'), { sessionId: null, context: context({ timeoutMs: 500 }) });
    await expect(failed).rejects.toBeInstanceOf(McpTimeoutError);
    await expect(failed).rejects.toMatchObject({ delivered: true, pid: hungPid });
    // A live process is shut down after the error was returned, not in the caller's time.
    await waitUntil(() => !isAlive(hungPid), 10_000, 'the timed-out process to be killed');
    const after = await call(transport, toolCall('info'));
    expect(after.result.structuredContent.pid).not.toBe(hungPid);
  });

  it('replaces a process that keeps writing invalid framing on stdout', async () => {
    const transport = pooled({ command: rawServer('junk'), pool: { max: 1, idleMs: 30_000, maxInvalidLines: 10 } });
    const first = await call(transport, toolCall('info'));
    const junkyPid = first.result.structuredContent.pid as number;
    await waitUntil(() => !isAlive(junkyPid), 10_000, 'the junk-writing process to be retired');
    const second = await call(transport, toolCall('info'));
    expect(second.result.structuredContent.pid).not.toBe(junkyPid);
  });

  it('a call waiting for a busy pool times out with delivered=false', async () => {
    const transport = pooled({ command: rawServer(), pool: { max: 1, idleMs: 30_000 } });
    // The one process is warmed first: spawn and handshake are behind it, so the hanging call's
    // deadline can only run out on its request, however slowly a loaded machine spawns.
    const warm = await call(transport, toolCall('info'));
    const warmPid = warm.result.structuredContent.pid as number;
    const hanging = transport.deliver(toolCall('hang'), { sessionId: null, context: context({ timeoutMs: 3_000 }) });
    const waiting = transport.deliver(toolCall('info'), { sessionId: null, context: context({ timeoutMs: 300 }) });
    await expect(waiting).rejects.toBeInstanceOf(McpTimeoutError);
    await expect(waiting).rejects.toMatchObject({
      delivered: false,
      message: expect.stringContaining('waiting for a free pooled process'),
    });
    await expect(hanging).rejects.toBeInstanceOf(McpTimeoutError);
    await expect(hanging).rejects.toMatchObject({ delivered: true, pid: warmPid });
  });

  it('answers server->client requests with the handler of the call in progress', async () => {
    const transport = pooled({ command: rawServer() });
    const reply = { role: 'assistant', content: { type: 'text', text: 'pooled sample' }, model: 'm' };
    const answered = await call(transport, toolCall('sample'), context({ onServerRequest: async () => reply }));
    expect(answered.result.structuredContent.reply.result).toEqual(reply);
    const refused = await call(transport, toolCall('sample'));
    expect(refused.result.structuredContent.reply.error.code).toBe(-32601);
  });

  it('shuts idle processes down after idleMs', async () => {
    const transport = pooled({ pool: { max: 2, idleMs: 200 } });
    const { result } = await call(transport, toolCall('whoami'));
    await waitUntil(() => !isAlive(result.structuredContent.pid), 10_000, 'the idle process to exit');
    expect(transport.processCount).toBe(0);
  });

  it('close() shuts every process down and refuses further calls', async () => {
    const transport = pooled({ pool: { max: 2, idleMs: 30_000 } });
    const results = await Promise.all([call(transport, toolCall('whoami')), call(transport, toolCall('whoami'))]);
    const pids = results.map((r) => r.result.structuredContent.pid as number);
    await transport.close();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(transport.processCount).toBe(0);
    await expect(transport.deliver(toolCall('whoami'), { sessionId: null, context: context() })).rejects.toMatchObject({
      delivered: false,
    });
  });
});

import { McpTransportError } from '../../../errors/mcp-client.errors';
import {
  context,
  isAlive,
  pidRecorder,
  rawServer,
  request,
  toolCall,
  waitUntil,
} from '../../../../../test/fixtures/stdio/stdio-test-kit';
import type { McpTransportResult } from '../mcp-transport.interface';
import { StdioTransport } from './stdio.transport';
import type { StdioTransportOptions } from './stdio.options';

jest.setTimeout(60_000);

/** The pid the fixture's `info` tool reports (fails when the call did not succeed). */
function pidOf(delivery: McpTransportResult): number {
  const body = delivery.body;
  if (!body || !('result' in body)) throw new Error(`Expected a result, got ${JSON.stringify(body)}`);
  return (body.result as { structuredContent: { pid: number } }).structuredContent.pid;
}

describe('StdioPool through a pooled StdioTransport', () => {
  const spawned = pidRecorder();
  const transports: StdioTransport[] = [];

  function pooled(options: Partial<StdioTransportOptions> = {}): StdioTransport {
    const transport = new StdioTransport({
      command: rawServer(),
      stateless: true,
      pool: { max: 1, idleMs: 30_000 },
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
    await waitUntil(() => spawned.pids.filter(isAlive).length === 0, 10_000, 'every pooled process to end');
  });

  it('reports a waiting caller and its wait, and wakes it with a refusal when the pool closes', async () => {
    const transport = pooled();
    expect(transport.stats().pool).toEqual({ size: 0, max: 1, idle: 0, waiting: 0, oldestWaitingMs: null });
    // A warm process first, so the pool closes while a call runs, not while a handshake does.
    await transport.deliver(toolCall('info'), { sessionId: null, context: context() });
    expect(transport.stats().pool).toMatchObject({ size: 1, idle: 1, waiting: 0 });
    const busy = transport.deliver(toolCall('hang'), { sessionId: null, context: context() });
    busy.catch(() => undefined);
    await waitUntil(() => transport.stats().pool?.idle === 0, 10_000, 'the hanging call to take the process');
    const queued = transport.deliver(toolCall('info'), { sessionId: null, context: context() });
    queued.catch(() => undefined);
    await waitUntil(() => transport.stats().pool?.waiting === 1, 10_000, 'a waiting caller');
    const stats = transport.stats().pool!;
    expect(stats).toMatchObject({ size: 1, max: 1, idle: 0, waiting: 1 });
    expect(stats.oldestWaitingMs).toBeGreaterThanOrEqual(0);
    await transport.close();
    await expect(queued).rejects.toBeInstanceOf(McpTransportError);
    await expect(queued).rejects.toMatchObject({ delivered: false });
    await expect(busy).rejects.toBeInstanceOf(McpTransportError);
    expect(transport.stats().pool).toMatchObject({ size: 0, waiting: 0, oldestWaitingMs: null });
  });

  it('keeps warm processes of one era: a stateless call retires an initialized idle process and starts its own', async () => {
    const transport = pooled();
    const initialized = await transport.deliver(toolCall('info'), { sessionId: null, context: context() });
    expect(initialized.handshake).toBeDefined();
    const firstPid = pidOf(initialized);
    const bare = await transport.deliver(toolCall('info'), { sessionId: null, context: context(), stateless: true });
    expect(bare.handshake).toBeUndefined();
    const secondPid = pidOf(bare);
    expect(secondPid).not.toBe(firstPid);
    await waitUntil(() => !isAlive(firstPid), 10_000, 'the retired process to end');
    const again = await transport.deliver(toolCall('info'), { sessionId: null, context: context(), stateless: true });
    expect(pidOf(again)).toBe(secondPid);
    expect(transport.stats().pool).toMatchObject({ size: 1, idle: 1 });
  });

  it('reports a process that dies before it answers with its stderr, and keeps no member for it', async () => {
    const transport = pooled({ command: rawServer('early-exit') });
    const failed = transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    await expect(failed).rejects.toBeInstanceOf(McpTransportError);
    await expect(failed).rejects.toMatchObject({ delivered: false });
    await expect(failed).rejects.toMatchObject({ stderr: expect.stringContaining('needs a configuration file') });
    expect(transport.stats().pool).toMatchObject({ size: 0, idle: 0 });
  });
});

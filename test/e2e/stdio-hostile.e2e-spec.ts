import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../src/mcp/errors/mcp-client.errors';
import type { JsonRpcNotification } from '../../src/mcp/protocol/jsonrpc';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import type { StdioTransportOptions } from '../../src/mcp/client/transports/stdio/stdio.options';
import type { StdioClientError } from '../../src/mcp/client/transports/stdio/stdio.errors';
import { call, context, isAlive, pidRecorder, rawServer, toolCall, waitUntil } from '../fixtures/stdio/stdio-test-kit';

/**
 * What a call's deadline is held to: three times it plus 2 s for a starved machine, counted from
 * the moment the call was issued to a server that was hostile from the start. A call that waited
 * without its deadline would exceed it by far; this is a correctness bound, not a speed target.
 */
const boundOf = (timeoutMs: number) => timeoutMs * 3 + 2_000;

/** Runs one call that must fail, and returns its error. */
async function failure(
  options: StdioTransportOptions,
  name: string,
  ctx = context(),
  args: Record<string, unknown> = {},
): Promise<StdioClientError> {
  const transport = new StdioTransport(options);
  try {
    await transport.deliver(toolCall(name, args), { sessionId: null, context: ctx });
  } catch (error) {
    return error as StdioClientError;
  } finally {
    await transport.close();
  }
  throw new Error(`the call to ${name} succeeded`);
}

/**
 * Like `failure`, but the call goes to a process that already answered an `info` call (a pool of
 * one): spawn and handshake are behind it, so a short `timeout` can only run out on the request
 * itself, however slowly a loaded machine spawns. Returns the error and the warm process's pid.
 */
async function failureOnWarmProcess(
  options: StdioTransportOptions,
  name: string,
): Promise<{ error: StdioClientError; warmPid: number; elapsedMs: number }> {
  const transport = new StdioTransport({ ...options, stateless: true, pool: { max: 1, idleMs: 60_000 } });
  try {
    const warm = await call(transport, toolCall('info'));
    const warmPid = warm.result.structuredContent.pid as number;
    const issuedAt = Date.now();
    const error = await transport.deliver(toolCall(name), { sessionId: null, context: context() }).then(
      () => {
        throw new Error(`the call to ${name} succeeded`);
      },
      (e: unknown) => e as StdioClientError,
    );
    return { error, warmPid, elapsedMs: Date.now() - issuedAt };
  } finally {
    await transport.close();
  }
}

describe('StdioTransport against hostile and broken servers', () => {
  let scratch: string;
  const spawned = pidRecorder();
  const fast = { closeGraceMs: 300, killGraceMs: 300, onSpawn: spawned.onSpawn };

  beforeAll(() => (scratch = mkdtempSync(join(tmpdir(), 'stdio-hostile-'))));
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
    expect(spawned.pids.filter(isAlive)).toEqual([]);
  });

  it('a crash mid-call is a transport error with delivered=true, carrying stderr and the pid', async () => {
    const error = await failure({ command: rawServer(), ...fast }, 'crash');
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error.delivered).toBe(true);
    expect(error.message).toMatch(/exited with code 1 after the request was sent/);
    expect(error.stderr).toContain('crashing on purpose');
    expect(error.stderr).toContain('fixture crash');
    expect(isAlive(error.pid as number)).toBe(false);
  });

  it('a server that never answers the request times out with delivered=true, is told so, and is shut down', async () => {
    const recordFile = join(scratch, 'timeout.ndjson');
    const { error, warmPid, elapsedMs } = await failureOnWarmProcess(
      { command: rawServer(), env: { STDIO_FIXTURE_RECORD: recordFile }, timeoutMs: 1500, ...fast },
      'hang',
    );
    expect(elapsedMs).toBeLessThanOrEqual(boundOf(1500));
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error.delivered).toBe(true);
    expect((error as unknown as McpTimeoutError).timeoutMs).toBe(1500);
    // The deadline ran out on the request the warm process had read, not on a spawn.
    expect(error.pid).toBe(warmPid);
    expect(isAlive(error.pid as number)).toBe(false);
    const received = readFileSync(recordFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const calls = received.filter((m) => m.method === 'tools/call');
    expect(calls.map((m) => m.params.name)).toEqual(['info', 'hang']);
    expect(received.at(-1)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: calls[1].id, reason: 'No response within 1500 ms' },
    });
  });

  it('a server that never answers initialize times out with delivered=false', async () => {
    // The deadline covers the spawn and the handshake: the clock starts before the process exists.
    const issuedAt = Date.now();
    const error = await failure({ command: rawServer('no-init'), timeoutMs: 1000, ...fast }, 'info');
    expect(Date.now() - issuedAt).toBeLessThanOrEqual(boundOf(1000));
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error.delivered).toBe(false);
    expect(error.message).toContain('during the initialize handshake');
    expect(isAlive(error.pid as number)).toBe(false);
  });

  it('a server that picks a protocol revision the client does not speak is a protocol error with delivered=false', async () => {
    const error = await failure({ command: rawServer('bad-version'), ...fast }, 'info');
    expect(error).toBeInstanceOf(McpProtocolError);
    expect(error.delivered).toBe(false);
    expect(error.message).toContain('"1999-01-01"');
    expect(isAlive(error.pid as number)).toBe(false);
  });

  it('a server that exits before initialize is a transport error with delivered=false and its stderr', async () => {
    const error = await failure({ command: rawServer('early-exit'), ...fast }, 'info');
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error.delivered).toBe(false);
    expect(error.message).toMatch(/exited with code 2 during the initialize handshake/);
    expect(error.stderr).toBe('fatal: this server needs a configuration file\n');
  });

  it('a program that does not exist fails to spawn with delivered=false (ENOENT)', async () => {
    const error = await failure({ command: [join(scratch, 'no-such-server')], ...fast }, 'info');
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error.delivered).toBe(false);
    expect(error.message).toContain('ENOENT');
    expect(error.pid).toBeNull();
  });

  it('a file that is not executable fails to spawn with delivered=false (EACCES)', async () => {
    const file = join(scratch, 'not-executable');
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o644);
    const error = await failure({ command: [file], ...fast }, 'info');
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error.delivered).toBe(false);
    expect(error.message).toContain('EACCES');
  });

  it('skips junk lines and non-object JSON on stdout, and the call succeeds', async () => {
    const transport = new StdioTransport({ command: rawServer('junk'), ...fast });
    const { result, delivery } = await call(transport, toolCall('info'));
    expect(result.structuredContent.argv).toEqual(['junk']);
    expect(delivery.handshake?.serverInfo).toEqual({ name: 'raw-fixture', version: '0.0.1' });
    expect(JSON.parse(delivery.rawResponse as string).id).toBe(delivery.body?.id);
    await transport.close();
  });

  it('drops responses to ids nobody awaits, and returns the awaited one', async () => {
    const transport = new StdioTransport({ command: rawServer(), ...fast });
    const message = toolCall('stray');
    const { result, delivery } = await call(transport, message);
    expect(delivery.body?.id).toBe(message.id);
    expect(result.structuredContent).toEqual({ real: true });
    await transport.close();
  });

  it('answers an unknown server->client request with -32601 and ping with {}; the call completes', async () => {
    const transport = new StdioTransport({ command: rawServer(), ...fast });
    const { result } = await call(
      transport,
      toolCall('ask-unknown'),
      context({ onServerRequest: async () => ({ made: 'up' }) }),
    );
    expect(result.structuredContent.unknown.error).toEqual({ code: -32601, message: 'Method not found: bogus/method' });
    expect(result.structuredContent.ping.result).toEqual({});
    await transport.close();
  });

  it('answers sampling with -32601 when the context has no handler', async () => {
    const transport = new StdioTransport({ command: rawServer(), ...fast });
    const { result } = await call(transport, toolCall('sample'));
    expect(result.structuredContent.reply.error.code).toBe(-32601);
    expect(result.structuredContent.reply.result).toBeUndefined();
    await transport.close();
  });

  it('forwards server notifications to onNotification', async () => {
    const transport = new StdioTransport({ command: rawServer(), ...fast });
    const seen: JsonRpcNotification[] = [];
    await call(transport, toolCall('notify'), context({ onNotification: (n) => seen.push(n) }));
    expect(seen).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello from the fixture' } },
    ]);
    await transport.close();
  });

  it('drains a 256 MB stderr flood without newlines, keeping only the capped tail and little memory', async () => {
    const transport = new StdioTransport({ command: rawServer(), ...fast, stderrLimitBytes: 8192 });
    const before = process.memoryUsage().rss;
    const { result, delivery } = await call(transport, toolCall('flood', { mb: 256 }), context({ timeoutMs: 60_000 }));
    const grown = process.memoryUsage().rss - before;
    expect(result.structuredContent).toEqual({ flooded: 256 });
    // The flood is far longer than the cap: what is kept is exactly the last 8 KiB.
    expect(Buffer.byteLength(delivery.stderr)).toBe(8192);
    expect(delivery.stderr.endsWith('xxxxEND-OF-FLOOD')).toBe(true);
    // Holding the flood would grow the process by at least 256 MB; draining it costs a few chunks
    // (measured 17-36 MiB of RSS, in a process that does other work too).
    expect(grown).toBeLessThan(64 * 1024 * 1024);
    await transport.close();
  }, 90_000);

  it('returns the result of a server that ignores EOF and SIGTERM while it still runs, then SIGKILLs it', async () => {
    const pids = pidRecorder();
    // Grace periods far longer than the poll below would allow: the call must not wait for them.
    const transport = new StdioTransport({
      command: rawServer('ignore-term'),
      closeGraceMs: 2_000,
      killGraceMs: 2_000,
      onSpawn: pids.onSpawn,
    });
    const { result } = await call(transport, toolCall('info'));
    // Evidence that the result came first: the child has not even been sent SIGTERM yet.
    expect(result.structuredContent.pid).toBe(pids.pids[0]);
    expect(isAlive(pids.pids[0])).toBe(true);
    expect(transport.processCount).toBe(1);
    await waitUntil(() => !isAlive(pids.pids[0]), 15_000, 'the server to be SIGKILLed after its call');
    await waitUntil(() => transport.processCount === 0, 5_000, 'the transport to forget the process');
    await transport.close();
  });

  it('processes the server started itself do not outlive the call either', async () => {
    const transport = new StdioTransport({ command: rawServer('grandchild'), ...fast });
    const { result } = await call(transport, toolCall('info'));
    expect(result.structuredContent.helper).toEqual(expect.any(Number));
    // The shutdown, and the SIGKILL to the group after it, run once the call has returned.
    await waitUntil(() => !isAlive(result.structuredContent.pid), 10_000, 'the server to exit');
    await waitUntil(() => !isAlive(result.structuredContent.helper), 10_000, 'the helper process to die');
    await transport.close();
  });

  it('a hanging server that also ignores SIGTERM ends in a timeout, and its pid is gone', async () => {
    const { error, warmPid, elapsedMs } = await failureOnWarmProcess(
      { command: rawServer('ignore-term'), timeoutMs: 1000, ...fast },
      'hang',
    );
    expect(elapsedMs).toBeLessThanOrEqual(boundOf(1000));
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error.delivered).toBe(true);
    expect(error.pid).toBe(warmPid);
    expect(isAlive(error.pid as number)).toBe(false);
  });

  it('a line longer than maxMessageChars is a protocol error and the process is killed', async () => {
    const error = await failure({ command: rawServer(), maxMessageChars: 4096, ...fast }, 'big', context(), {
      chars: 100_000,
    });
    expect(error).toBeInstanceOf(McpProtocolError);
    expect(error.delivered).toBe(true);
    expect(error.message).toContain('longer than maxMessageChars (4096 characters)');
    expect(isAlive(error.pid as number)).toBe(false);
  });

  it('aborting during a hanging call sends notifications/cancelled for it, then rejects', async () => {
    const recordFile = join(scratch, 'received.ndjson');
    const transport = new StdioTransport({ command: rawServer(), env: { STDIO_FIXTURE_RECORD: recordFile }, ...fast });
    const controller = new AbortController();
    const message = toolCall('hang');
    const pending = transport.deliver(message, { sessionId: null, context: context({ signal: controller.signal }) });
    const rejected = expect(pending).rejects.toMatchObject({ constructor: McpTimeoutError, delivered: true });
    const sent = () => {
      try {
        return readFileSync(recordFile, 'utf8').includes('"tools/call"');
      } catch {
        return false;
      }
    };
    await waitUntil(sent, 10_000, 'the fixture to receive the request');
    controller.abort();
    await rejected;
    // The notice was written before the rejection; the fixture reads it on its own time.
    await waitUntil(
      () => readFileSync(recordFile, 'utf8').includes('notifications/cancelled'),
      10_000,
      'the fixture to receive the notice',
    );
    const received = readFileSync(recordFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(received.map((m) => m.method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call',
      'notifications/cancelled',
    ]);
    expect(received[3].params).toEqual({ requestId: message.id, reason: 'The client aborted the request' });
    await transport.close();
  });
});

import type { NdjsonLine } from '../../../protocol/ndjson';
import { StdioProcess, type StdioExit, type StdioSpawnSpec } from './stdio-process';

/**
 * A node server that echoes each stdin line on stdout as JSON; its behaviour on shutdown is set per
 * test. It writes `ready` on stderr once its shutdown handlers are installed.
 */
function server(onShutdown: string): StdioSpawnSpec {
  const source = `
    process.stdin.setEncoding('utf8');
    let buffer = '';
    process.stdin.on('data', (chunk) => {
      buffer += chunk;
      let i;
      while ((i = buffer.indexOf('\\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        process.stdout.write(JSON.stringify({ echo: line }) + '\\n');
      }
    });
    ${onShutdown}
    process.stderr.write('ready\\n');
  `;
  return {
    argv: [process.execPath, '-e', source],
    env: { PATH: process.env.PATH ?? '' },
    cwd: undefined,
    stderrLimitBytes: 4096,
    maxMessageChars: 1000,
    orphanGraceMs: 100,
  };
}

const started: StdioProcess[] = [];

function start(spec: StdioSpawnSpec) {
  const lines: NdjsonLine[] = [];
  const closed: StdioExit[] = [];
  const overflows: number[] = [];
  const child = new StdioProcess(spec, {
    line: (line) => lines.push(line),
    overflow: (chars) => overflows.push(chars),
    closed: (exit) => closed.push(exit),
  });
  started.push(child);
  return { child, lines, closed, overflows };
}

/** True while a process of this pid exists, a zombie included: a child that was killed is gone only once reaped. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `condition` every 10 ms for at most five seconds (a child node process starts well within
 * that even on a loaded machine): a change that makes the awaited line, exit or close never come
 * fails the test instead of holding it until the runner gives up.
 */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited 5 s for ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const onStdinEnd = `process.stdin.on('end', () => process.exit(0));`;
const ignoreStdinEnd = `process.stdin.on('end', () => undefined); setInterval(() => undefined, 1000);`;
const ignoreSigterm = `${ignoreStdinEnd} process.on('SIGTERM', () => undefined);`;

describe('StdioProcess', () => {
  jest.setTimeout(20_000);

  // A failed assertion must not leave a server running: it would keep the test process alive.
  afterEach(async () => {
    await Promise.all(started.splice(0).map((child) => child.shutdown(50, 50)));
  });

  it('reports the server pid, frames stdout into lines and keeps stderr', async () => {
    const { child, lines } = start(server(onStdinEnd));
    const pid = await child.started;
    expect(typeof pid).toBe('number');
    expect(child.pid).toBe(pid);
    expect(child.running).toBe(true);
    expect(child.write('hello\n')).toBe(true);
    await until(() => lines.length === 1);
    expect(lines[0]).toEqual(expect.objectContaining({ kind: 'object', value: { echo: 'hello' } }));
    await until(() => child.stderr().includes('ready'));
    // The server wrote `ready\n` on stderr and nothing else.
    expect(child.stderrBytes).toBe(6);
    expect(child.stderr()).toBe('ready\n');
    expect(child.stderr(child.stderrBytes)).toBe('');
    await child.shutdown(5000, 5000);
  });

  it('ends a server that exits on stdin close without signalling it, and reports closed once', async () => {
    const { child, closed } = start(server(onStdinEnd));
    await child.started;
    await child.shutdown(5000, 5000);
    expect(await child.exit).toEqual({ code: 0, signal: null });
    expect(child.running).toBe(false);
    expect(child.write('late\n')).toBe(false);
    expect(closed).toEqual([{ code: 0, signal: null }]);
  });

  it('sends SIGTERM to a server that ignores stdin close once closeGraceMs is over', async () => {
    const { child } = start(server(ignoreStdinEnd));
    await child.started;
    // A signal sent before the server installed its handlers would end it the default way.
    await until(() => child.stderr().includes('ready'));
    await child.shutdown(100, 5000);
    expect(await child.exit).toEqual(expect.objectContaining({ signal: 'SIGTERM' }));
  });

  it('sends SIGKILL to a server that also ignores SIGTERM once killGraceMs is over', async () => {
    const { child } = start(server(ignoreSigterm));
    await child.started;
    // A signal sent before the server installed its handlers would end it the default way.
    await until(() => child.stderr().includes('ready'));
    await child.shutdown(50, 100);
    expect(await child.exit).toEqual(expect.objectContaining({ signal: 'SIGKILL' }));
  });

  it('reaps a server that had to be SIGKILLed: its pid is gone, not left a zombie for PID 1', async () => {
    const { child } = start(server(ignoreSigterm));
    await child.started;
    await until(() => child.stderr().includes('ready'));
    const pid = child.pid as number;
    await child.shutdown(50, 100);
    expect(await child.exit).toEqual(expect.objectContaining({ signal: 'SIGKILL' }));
    // The supervisor outlives the SIGKILL of the server's group and exits only once it reaped the
    // server: by the time its exit is reported, the pid is gone (no PID 1 had to collect it).
    expect(running(pid)).toBe(false);
  });

  it('ends what the server started in its process group once the server exited', async () => {
    const source = `
      const helper = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], { stdio: 'ignore' });
      process.stdout.write(JSON.stringify({ helper: helper.pid }) + '\\n');
      process.stdin.on('end', () => process.exit(0));
      process.stdin.resume();
    `;
    const { child, lines } = start({ ...server(''), argv: [process.execPath, '-e', source] });
    await child.started;
    await until(() => lines.length === 1);
    const helper = (lines[0] as unknown as { value: { helper: number } }).value.helper;
    expect(running(helper)).toBe(true);
    await child.shutdown(5000, 5000);
    expect(await child.exit).toEqual({ code: 0, signal: null });
    await until(() => !running(helper));
  });

  it('refuses writes once the server exited by itself', async () => {
    const { child, closed } = start({ ...server(''), argv: [process.execPath, '-e', 'process.exit(3)'] });
    await child.started;
    expect(await child.exit).toEqual({ code: 3, signal: null });
    expect(child.write('too late\n')).toBe(false);
    await until(() => closed.length === 1);
    expect(closed).toEqual([{ code: 3, signal: null }]);
  });

  it('hands over a last stdout line without its newline when the server exits, and reports an over-long line as overflow', async () => {
    const source = `process.stdout.write('x'.repeat(1500) + '\\n' + JSON.stringify({ last: true }));`;
    const { child, lines, overflows, closed } = start({ ...server(''), argv: [process.execPath, '-e', source] });
    await child.started;
    await until(() => closed.length === 1);
    // One overflow, counted when the line passed maxMessageChars (1000), however the pipe cut it.
    expect(overflows).toHaveLength(1);
    expect(overflows[0]).toBeGreaterThan(1000);
    expect(lines).toEqual([expect.objectContaining({ kind: 'object', value: { last: true } })]);
  });

  it('runs the shutdown sequence once when asked twice', async () => {
    const { child, closed } = start(server(onStdinEnd));
    await child.started;
    const first = child.shutdown(5000, 5000);
    expect(child.shutdown(1, 1)).toBe(first);
    await first;
    expect((await child.exit).code).toBe(0);
    expect(closed).toHaveLength(1);
  });

  it('reports a server that cannot be started as a spawn error, with no pid', async () => {
    const { child, closed } = start({ ...server(''), argv: ['/nonexistent/durable-mcp-server'] });
    expect(await child.started).toBeUndefined();
    const exit = await child.exit;
    expect(exit.code).toBeNull();
    expect(exit.signal).toBeNull();
    expect(exit.spawnError?.code).toBe('ENOENT');
    expect(child.pid).toBeUndefined();
    await child.shutdown(10, 10);
    await until(() => closed.length === 1);
    expect(closed[0].spawnError?.code).toBe('ENOENT');
  });

  it('passes NODE_OPTIONS on to the server, not to the supervisor', async () => {
    const spec = server(
      `${onStdinEnd} process.stdout.write(JSON.stringify({ options: process.env.NODE_OPTIONS ?? null }) + '\\n');`,
    );
    const { child, lines } = start({ ...spec, env: { ...spec.env, NODE_OPTIONS: '--max-old-space-size=64' } });
    await until(() => lines.length === 1);
    expect(lines[0]).toEqual(
      expect.objectContaining({ kind: 'object', value: { options: '--max-old-space-size=64' } }),
    );
    await child.shutdown(5000, 5000);
  });

  it('reports the exit code of a server that exits by itself', async () => {
    const { child, closed } = start(server(`setTimeout(() => process.exit(3), 10);`));
    expect(await child.exit).toEqual({ code: 3, signal: null });
    await until(() => closed.length === 1);
    await child.shutdown(10, 10);
    expect(closed).toEqual([{ code: 3, signal: null }]);
  });
});

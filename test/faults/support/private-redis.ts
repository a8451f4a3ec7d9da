import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, pollUntil } from './free-port';

/** A redis-server of this test alone, on a free loopback port, without persistence. */
export interface PrivateRedis {
  port: number;
  /** redis://127.0.0.1:PORT */
  url: string;
  /** Kills the server (SIGKILL): every connection drops, every key is gone. */
  kill(): Promise<void>;
  /** Starts a fresh server on the same port and waits until it answers PING. */
  start(): Promise<void>;
  /** Kills the server if it runs. */
  destroy(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** How long a private redis-server may take to answer PING on a loaded machine. */
const REDIS_READY_DEADLINE_MS = 30_000;

/**
 * Starts a private redis-server (killed again if it does not answer PING in time). Call
 * `destroy()` in `afterAll`, whatever happens.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = server;
    const exited = new Promise<never>((_, reject) =>
      server.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`))),
    );
    exited.catch(() => undefined);
    try {
      await Promise.race([
        pollUntil(
          `redis-server on ${port}`,
          async () => ((await ping(port)) ? true : undefined),
          REDIS_READY_DEADLINE_MS,
          50,
        ),
        exited,
      ]);
    } catch (error) {
      // Not ready in time (or gone): nothing else holds this child, so it must not outlive the error.
      await kill();
      throw error;
    }
  };
  const kill = async () => {
    const server = child;
    child = null;
    if (!server || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, kill, start, destroy: kill };
}

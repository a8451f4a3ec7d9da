/**
 * A TCP proxy that delays every chunk by a fixed time in both directions, keeping their order:
 * the benchmark's stand-in for a network link with latency (the kernel here has no netem).
 * Started as its own process so its CPU is measured apart from the load generator's.
 *
 * Usage: delay.proxy.ts <delay ms> <listen host:port>=<upstream host:port> ...
 * Prints `ready` once every listener is bound; exits when its IPC channel or stdin closes.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

function split(hostPort: string): { host: string; port: number } {
  const at = hostPort.lastIndexOf(':');
  const port = Number(hostPort.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0) throw new Error(`"${hostPort}" is not host:port`);
  return { host: hostPort.slice(0, at), port };
}

/**
 * Copies `from` to `to`, each chunk `delayMs` after it arrived. Timers of the same duration fire
 * in the order they were set, so chunks keep their order. Reading pauses while more than
 * `HIGH_WATER` bytes wait or the destination is full.
 */
function pipeDelayed(from: Socket, to: Socket, delayMs: number): void {
  const HIGH_WATER = 1 << 20;
  let waiting = 0;
  const resumeIfRoom = () => {
    if (waiting < HIGH_WATER && !to.writableNeedDrain) from.resume();
  };
  to.on('drain', resumeIfRoom);
  from.on('data', (chunk: Buffer) => {
    waiting += chunk.length;
    if (waiting >= HIGH_WATER) from.pause();
    const forward = () => {
      waiting -= chunk.length;
      if (!to.destroyed && !to.write(chunk)) from.pause();
      else resumeIfRoom();
    };
    if (delayMs > 0) setTimeout(forward, delayMs);
    else forward();
  });
  from.on('end', () => {
    if (delayMs > 0) setTimeout(() => to.end(), delayMs);
    else to.end();
  });
}

function listen(listenAt: string, upstreamAt: string, delayMs: number): Promise<Server> {
  const local = split(listenAt);
  const upstream = split(upstreamAt);
  const server = createServer({ noDelay: true }, (client) => {
    const remote = createConnection({ host: upstream.host, port: upstream.port, noDelay: true });
    const close = () => {
      client.destroy();
      remote.destroy();
    };
    client.on('error', close).on('close', close);
    remote.on('error', close).on('close', close);
    pipeDelayed(client, remote, delayMs);
    pipeDelayed(remote, client, delayMs);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(local.port, local.host, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const [delayText, ...routes] = process.argv.slice(2);
  const delayMs = Number(delayText);
  if (!Number.isFinite(delayMs) || delayMs < 0 || !routes.length) {
    throw new Error('usage: delay.proxy.ts <delay ms> <listen host:port>=<upstream host:port> ...');
  }
  await Promise.all(
    routes.map((route) => {
      const [from, to] = route.split('=');
      return listen(from, to, delayMs);
    }),
  );
  process.on('disconnect', () => process.exit(0));
  process.stdout.write('ready\n');
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});

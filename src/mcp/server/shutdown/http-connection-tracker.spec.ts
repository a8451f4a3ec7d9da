import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HttpConnectionTracker } from './http-connection-tracker';

/** One exchange as the client saw it, with the socket it went over. */
interface Reply {
  status?: number;
  connection?: string;
  reused?: boolean;
  socket?: Socket;
  error?: string;
}

function get(port: number, agent: Agent): Promise<Reply> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          connection: res.headers.connection,
          reused: req.reusedSocket,
          socket: req.socket as Socket,
        }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });
}

function closed(socket: Socket): Promise<void> {
  return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Real sockets on loopback: a Node HTTP server with the tracker, and a keep-alive client. */
describe('HttpConnectionTracker', () => {
  let server: Server;
  let tracker: HttpConnectionTracker;
  let port: number;
  let agent: Agent;
  /** Answers held by the test, by arrival order. */
  let held: ServerResponse[];
  let holding: boolean;

  beforeEach(async () => {
    held = [];
    holding = false;
    server = createServer();
    tracker = new HttpConnectionTracker(server);
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => (holding ? held.push(res) : res.end('ok')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });

  afterEach(async () => {
    agent.destroy();
    server.closeAllConnections();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  });

  it('answers with Connection: close once draining, the answers of requests that arrived before included, and the server closes the connection after it', async () => {
    const before = await get(port, agent);
    expect(before).toMatchObject({ status: 200, connection: 'keep-alive' });

    holding = true;
    const inFlight = get(port, agent);
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    tracker.startDraining();
    held[0].end('late');
    const answered = await inFlight;
    expect(answered).toMatchObject({ status: 200, connection: 'close', reused: true });
    await closed(answered.socket!);

    holding = false;
    expect(await get(port, agent)).toMatchObject({ status: 200, connection: 'close', reused: false });
  });

  it('stops accepting without closing an idle keep-alive connection: a request written on it is answered, a new connection is refused', async () => {
    const first = await get(port, agent);
    expect(first).toMatchObject({ status: 200, connection: 'keep-alive' });
    tracker.startDraining();
    tracker.stopAccepting();
    expect(server.listening).toBe(false);

    const onIdle = await get(port, agent);
    expect(onIdle).toMatchObject({ status: 200, connection: 'close', reused: true });
    expect(await get(port, new Agent({ keepAlive: true }))).toEqual({ error: 'ECONNREFUSED' });
  });

  it('at the close, keeps an idle connection open while it has not stayed idle for idleMs, answers the request that comes on it, then is done', async () => {
    const first = await get(port, agent);
    tracker.startDraining();
    let done = false;
    const closing = tracker.close(60_000, 120_000).then(() => (done = true));

    const onIdle = await get(port, agent);
    expect(onIdle).toMatchObject({ status: 200, connection: 'close', reused: true });
    expect(onIdle.socket).toBe(first.socket);
    await closing;
    expect(done).toBe(true);
    expect(tracker.size).toBe(0);
  });

  it('at the close, ends a connection that stayed idle for idleMs, and waits for one whose answer is not sent', async () => {
    const idle = await get(port, agent);
    const other = new Agent({ keepAlive: true });
    holding = true;
    const inFlight = get(port, other);
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    tracker.startDraining();

    let done = false;
    const closing = tracker.close(0, 60_000).then(() => (done = true));
    await closed(idle.socket!);
    // The server's side of it closes a moment after the client's.
    while (tracker.size > 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(done).toBe(false);

    held[0].end('late');
    expect(await inFlight).toMatchObject({ status: 200, connection: 'close' });
    await closing;
    expect(tracker.size).toBe(0);
    other.destroy();
  });
});

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { InFlightSet } from '../../in-flight-set';

/** Makes the response close its connection once sent, when its head is not sent yet. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * Where a tracked socket keeps what the tracker knows of it while it is open, and a tracked
 * response the connection it came on (undefined when its socket was not seen).
 */
const CONNECTION = Symbol('durable-mcp connection');

type TrackedSocket = Socket & { [CONNECTION]?: Connection };
type TrackedResponse = ServerResponse & { [CONNECTION]?: Connection };

/** What the tracker knows of one connection. */
interface Connection {
  /** Requests of this connection whose response has not finished (pipelined ones included). */
  busy: number;
  /** When a request last began or ended on it, or when it was accepted (Date.now()). */
  lastActivity: number;
  /** The server ended its side: it only waits for the client's. */
  ending: boolean;
}

/**
 * The connections of the app's HTTP server, so that the server closes without resetting any.
 *
 * HTTP/1.1 gives a server no way to close a keep-alive connection without racing a client that
 * writes its next request at that moment: the request meets a reset, and for a `tools/call` the
 * client cannot know whether the tool ran. Node's `server.close()` (which both Nest adapters
 * call) closes every idle connection at once, which is exactly that race. So, once the app
 * drains:
 * - every response carries `Connection: close`, so the client does not reuse a connection the
 *   server is about to close, and Node closes it only after that response went out;
 * - the listener stops accepting only once no connection arrived for the quiet period (the
 *   drain holds its last refusals meanwhile, so that even a caller that ignores `Retry-After`
 *   is waiting on an answer, not connecting, when the listener closes);
 * - at the adapter's close, a connection still open is closed only after it answered, or after
 *   it stayed idle for the quiet period (a request that arrives on it before that is answered,
 *   and the answer closes it); only then does the adapter's own close run.
 */
export class HttpConnectionTracker {
  /** The open connections; each socket keeps its `Connection`. */
  private readonly connections = new InFlightSet<TrackedSocket>();
  private readonly emptied: (() => void)[] = [];
  /** When the last connection was accepted (Date.now()). */
  private lastAccepted = 0;
  /**
   * Responses not finished yet (to mark those still to be sent when the drain begins); each keeps
   * the connection it came on.
   */
  private readonly responses = new InFlightSet<TrackedResponse>();
  /** The 'close' listener of every response (one function for all, `this` is the response). */
  private readonly onResponseClose: (this: ServerResponse) => void;
  private draining = false;

  /** @param server the app's Node HTTP server (under either adapter) */
  constructor(private readonly server: Server) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const tracker = this;
    this.onResponseClose = function (this: ServerResponse) {
      tracker.responseClosed(this);
    };
    server.on('connection', (socket: Socket) => this.accepted(socket));
    // First among the request listeners, so the header is set before the adapter handles the request.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.requested(req, res));
  }

  /**
   * The drain began: every response whose head is not sent yet, now and from now on, says
   * `Connection: close`, the answers of the calls in flight included.
   */
  startDraining(): void {
    this.draining = true;
    for (const res of this.responses) closeAfter(res);
  }

  /** How many connections are open. */
  get size(): number {
    return this.connections.size;
  }

  /**
   * Waits until no connection was accepted for `quietMs` (at most `deadlineMs`). A caller that
   * connects again right after each answer is connecting at any moment, and a connection still
   * in the kernel's accept queue when the listener closes is reset after its request was sent:
   * so the drain holds its last refusals until this returns, the callers wait on them, and the
   * accept queue empties.
   */
  async acceptQuiet(quietMs: number, deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const quietAt = Math.min(this.lastAccepted + quietMs, deadline);
      if (Date.now() >= quietAt) return;
      await new Promise((resolve) => setTimeout(resolve, quietAt - Date.now()));
    }
  }

  /** Stops accepting connections; those already open stay open. */
  stopAccepting(): void {
    // net.Server's close, not http.Server's: the latter also closes the idle connections at once,
    // racing a client that is writing its next request on one.
    if (this.server.listening) NetServer.prototype.close.call(this.server);
  }

  /**
   * Stops accepting connections, then waits for each open one to close: a connection with a
   * request in progress after its answer (which carries `Connection: close`), an idle one once it
   * stayed idle for `idleMs`. Resolves when none is left, or after `deadlineMs` with those that
   * are still busy left to the caller.
   */
  async close(idleMs: number, deadlineMs: number): Promise<void> {
    this.stopAccepting();
    const deadline = Date.now() + deadlineMs;
    while (this.connections.size > 0 && Date.now() < deadline) {
      const now = Date.now();
      let nextCheck = deadline;
      for (const socket of this.connections) {
        const connection = socket[CONNECTION] as Connection;
        if (connection.busy > 0 || connection.ending) continue;
        const closesAt = connection.lastActivity + idleMs;
        if (closesAt <= now) {
          connection.ending = true;
          socket.end();
        } else nextCheck = Math.min(nextCheck, closesAt);
      }
      await this.closedOrAt(nextCheck);
    }
  }

  private accepted(socket: Socket): void {
    this.lastAccepted = Date.now();
    (socket as TrackedSocket)[CONNECTION] = { busy: 0, lastActivity: Date.now(), ending: false };
    this.connections.add(socket);
    socket.once('close', () => {
      this.connections.delete(socket);
      (socket as TrackedSocket)[CONNECTION] = undefined;
      this.wakeAll();
    });
  }

  private requested(req: IncomingMessage, res: ServerResponse): void {
    if (this.draining) closeAfter(res);
    const connection = (req.socket as TrackedSocket)[CONNECTION];
    (res as TrackedResponse)[CONNECTION] = connection;
    this.responses.add(res);
    if (connection) {
      connection.busy++;
      connection.lastActivity = Date.now();
    }
    // A response emits 'close' once: a plain listener, shared by all, and no wrapper per response.
    res.on('close', this.onResponseClose);
  }

  private responseClosed(res: TrackedResponse): void {
    if (!this.responses.delete(res)) return;
    const connection = res[CONNECTION];
    res[CONNECTION] = undefined;
    if (!connection) return;
    connection.busy--;
    connection.lastActivity = Date.now();
    this.wakeAll();
  }

  /** Wakes whoever waits in `close` for a connection or a response to end. */
  private wakeAll(): void {
    if (this.emptied.length === 0) return;
    for (const wake of this.emptied.splice(0)) wake();
  }

  /** Resolves when a connection closed or a response ended, or at `at` (Date.now() time). */
  private closedOrAt(at: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          const index = this.emptied.indexOf(wake);
          if (index !== -1) this.emptied.splice(index, 1);
          resolve();
        },
        Math.max(at - Date.now(), 1),
      );
      this.emptied.push(wake);
    });
  }
}

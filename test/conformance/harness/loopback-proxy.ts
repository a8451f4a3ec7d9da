import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A running proxy. */
export interface LoopbackProxy {
  /** Base URL of the proxy, e.g. `http://127.0.0.1:40123`. */
  origin: string;
  /** Stops accepting, drops every open connection (SSE streams included) and resolves when closed. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Raw headers of `req` without `Authorization`, plus ours. Everything else goes through as the
 * client sent it, Host and Origin included (the DNS-rebinding scenario depends on it).
 */
function forwardedHeaders(req: IncomingMessage, token: string): string[] {
  const raw = req.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() !== 'authorization') out.push(raw[i], raw[i + 1]);
  }
  out.push('Authorization', `Bearer ${token}`);
  return out;
}

/**
 * A loopback-only HTTP proxy that adds `Authorization: Bearer <token>` to every request and
 * forwards everything else verbatim to `upstream` (also on loopback). Responses are piped chunk
 * by chunk, so SSE streams reach the client as the server writes them.
 */
export function startLoopbackProxy(upstream: string, token: string): Promise<LoopbackProxy> {
  const target = new URL(upstream);
  if (!LOOPBACK.has(target.hostname) && target.hostname !== 'localhost') {
    return Promise.reject(new Error(`The conformance proxy only forwards to loopback, not to ${target.hostname}`));
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) {
      res.writeHead(403).end();
      return;
    }
    const upstreamReq = httpRequest({
      host: target.hostname,
      port: Number(target.port),
      method: req.method,
      path: req.url,
      headers: forwardedHeaders(req, token) as unknown as Record<string, string>,
      setHost: false,
    });
    upstreamReq.on('response', (upstreamRes) => {
      res.writeHead(
        upstreamRes.statusCode ?? 502,
        upstreamRes.statusMessage,
        upstreamRes.rawHeaders as unknown as Record<string, string>,
      );
      res.flushHeaders();
      upstreamRes.pipe(res);
      upstreamRes.on('error', () => res.destroy());
    });
    upstreamReq.on('error', (error) => {
      if (!res.headersSent)
        res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`conformance proxy: ${error.message}`);
      else res.destroy();
    });
    // The client went away (e.g. it cancelled an SSE stream): let the server see it too.
    res.on('close', () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.pipe(upstreamReq);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.once('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const socket of sockets) socket.destroy();
          }),
      });
    });
  });
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A loopback HTTP server playing a broken or hostile authorization server: huge, slow or
 * redirecting answers, and what it cost the process that read them.
 */

/** How one path answers. */
export type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback authorization server whose paths answer as `routes` say (404 elsewhere). */
export interface HostileServer {
  origin: string;
  routes: Record<string, Route>;
  /** `METHOD path` of every request, with its Authorization header when it had one. */
  hits: string[];
  /** Bytes of body written by the floods, in all. */
  written: number;
  /** One promise per flood or drip answer, settled when its connection closed. */
  floods: Promise<void>[];
  /** Settles once every flood stopped: its connection closed, or it wrote everything. */
  floodsDone(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a hostile server on 127.0.0.1 with no route: every path answers 404 until one is set. */
export async function startHostile(): Promise<HostileServer> {
  const floods: Promise<void>[] = [];
  const state: HostileServer = {
    origin: '',
    routes: {},
    hits: [],
    written: 0,
    floods,
    floodsDone: () => Promise.all(floods).then(() => undefined),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      state.hits.push(`${req.method} ${path}${req.headers.authorization ? ` ${req.headers.authorization}` : ''}`);
      const route = state.routes[`${req.method} ${path}`] ?? state.routes[path];
      if (route) route(req, res);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/**
 * A route answering a JSON-looking body of `total` bytes, written as fast as the reader takes
 * it (never buffered whole), until it is all out or the connection closes. With `declare`, the
 * Content-Length says the size up front; without, the body is chunked.
 */
export function flood(hostile: HostileServer, total: number, declare: boolean): Route {
  return (_req, res) => {
    const done = new Promise<void>((resolve) => res.on('close', resolve));
    hostile.floods.push(done);
    res.writeHead(200, { 'Content-Type': 'application/json', ...(declare ? { 'Content-Length': String(total) } : {}) });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    chunk.write('{"issuer":"');
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !res.destroyed) {
        const size = Math.min(chunk.length, total - sent);
        sent += size;
        hostile.written += size;
        if (!res.write(size === chunk.length ? chunk : chunk.subarray(0, size))) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };
}

/** A route that sends its headers, then a byte now and then, never finishing within any deadline. */
export function drip(hostile: HostileServer): Route {
  return (_req, res) => {
    const done = new Promise<void>((resolve) => res.on('close', resolve));
    hostile.floods.push(done);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => res.write(' '), 100);
    res.on('close', () => clearInterval(timer));
  };
}

/** A route answering `status` with a `Location` header. */
export const redirect =
  (status: number, location: string): Route =>
  (_req, res) =>
    void res.writeHead(status, { Location: location }).end();

/** A route answering 200 with `body` as JSON. */
export const json =
  (body: unknown): Route =>
  (_req, res) =>
    void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

/** How one call ended (its value or its error), how long it took, and how far the process grew meanwhile. */
export interface Outcome<T = unknown> {
  value?: T;
  error: unknown;
  ms: number;
  peakGrowth: number;
}

/** Runs `work`, sampling the resident set size as it goes. */
export async function measured<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const timer = setInterval(sample, 5);
  const started = Date.now();
  let value: T | undefined;
  let error: unknown;
  try {
    value = await work();
  } catch (caught) {
    error = caught;
  } finally {
    clearInterval(timer);
    sample();
  }
  return { value, error, ms: Date.now() - started, peakGrowth: peak - base };
}

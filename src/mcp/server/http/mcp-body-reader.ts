import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { InFlightSet } from '../../in-flight-set';
import { TRANSPORT_ERROR_CODE, sendRpcError } from '../responses/mcp-http-responses';

/** What the body reader found, kept on the request for the controller. */
export type McpRawBody = { ok: true; text: string } | { ok: false; reason: 'aborted' };

/** The request property the raw body is stored under. */
export const MCP_RAW_BODY = Symbol('mcp:raw-body');

/**
 * The request as the endpoint reads it, on either HTTP adapter (Express's `Request`, Fastify's
 * `FastifyRequest`): Node's headers, the principal the bearer guard set, and the body the reader
 * kept.
 */
export interface McpRequest {
  /** The HTTP method (both adapters set it). */
  method?: string;
  headers: IncomingHttpHeaders;
  /** The principal, set by the bearer guard. */
  user?: unknown;
  /** What a host body parser made of the body, when the reader did not run. */
  body?: unknown;
  [MCP_RAW_BODY]?: McpRawBody;
}

/** The body limits of one mount path. */
export interface McpBodyLimits {
  /** Largest accepted body, in bytes. */
  maxBytes: number;
  /** Deadline for the whole body, in milliseconds. */
  timeoutMs: number;
}

/** Smallest amount of an oversized body read and discarded, so a small limit still lets clients see their 413. */
const MIN_DISCARD_BYTES = 64 * 1024;

/**
 * How many bytes of an oversized body are read (and thrown away) before the connection is cut.
 * HTTP/1.1 clients write the whole body before they read the answer: a server that answers and
 * closes early makes them fail with EPIPE or ECONNRESET instead of seeing the 413. Draining a
 * bounded amount lets ordinary clients read the status; a client sending more is disconnected.
 */
export function discardLimitOf(maxBytes: number): number {
  return Math.max(4 * maxBytes, maxBytes + MIN_DISCARD_BYTES);
}

function tooLargeMessage(limit: number): string {
  return `Payload Too Large: the body exceeds ${limit} bytes`;
}

/** 413 or 408, and close: the rest of the body will not be read. Nothing has answered yet: the reader runs first. */
function refuseAndClose(res: ServerResponse, status: number, message: string): void {
  res.setHeader('Connection', 'close');
  sendRpcError(res, status, TRANSPORT_ERROR_CODE, message);
}

/** One body being read: when its deadline falls, and what to do then. */
class PendingBody {
  constructor(
    readonly due: number,
    readonly expire: () => void,
  ) {}
}

/**
 * The deadlines of the bodies being read under one `McpBodyLimits`: one timer for all of them
 * instead of one per request. Every body gets the same timeout, so deadlines fall in the order
 * bodies started: the timer, when armed, is armed for the oldest one, and a new body never needs
 * it sooner. It is not cleared when a body arrives in time; when it fires it expires the bodies
 * that are due and is armed for the next one, if any. Under a steady stream of requests it is
 * armed about once per `timeoutMs`.
 */
class BodyDeadlines {
  private readonly pending = new InFlightSet<PendingBody>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly timeoutMs: number) {}

  /** Starts the deadline of one body; `expire` runs when it falls before `settle`. */
  start(expire: () => void): PendingBody {
    const body = new PendingBody(performance.now() + this.timeoutMs, expire);
    this.pending.add(body);
    if (!this.timer) this.arm(body.due);
    return body;
  }

  /** The body arrived, or the reader answered: its deadline no longer matters. */
  settle(body: PendingBody): void {
    this.pending.delete(body);
  }

  private arm(due: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, due - performance.now()));
    // A body still being read keeps its socket, and so the process, alive; the timer need not.
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = null;
    const now = performance.now();
    let next = Infinity;
    for (const body of this.pending) {
      if (body.due <= now) {
        this.pending.delete(body);
        body.expire();
      } else if (body.due < next) next = body.due;
    }
    if (next !== Infinity) this.arm(next);
  }
}

const deadlinesByLimits = new WeakMap<McpBodyLimits, BodyDeadlines>();

/** The deadlines of the bodies read under `limits` (one set per limits object, made on first use). */
function deadlinesOf(limits: McpBodyLimits): BodyDeadlines {
  let deadlines = deadlinesByLimits.get(limits);
  if (!deadlines) {
    deadlines = new BodyDeadlines(limits.timeoutMs);
    deadlinesByLimits.set(limits, deadlines);
  }
  return deadlines;
}

/**
 * Reads one request body under the limits of its mount path, before anything else of the app sees
 * it: the endpoint must answer bad JSON with a JSON-RPC -32700 and an oversized body with 413
 * under its own limit, whatever the host's parser settings are. A body over the limit is refused
 * here, before authentication: its rest is read and discarded up to `discardLimitOf(limit)` so
 * the client can read the 413, and a body that goes beyond that (or announces it in
 * Content-Length) is answered and the connection closed. A body that is not complete within the
 * deadline gets 408 and the connection is closed.
 *
 * `respond` gives the response to answer on (called only to answer); `onRead` is called once when
 * the request goes on to the controller, with the body or the fact that the client went away
 * mid-body, and not at all when the reader answered (413, 408).
 */
export function readMcpBody(
  body: Readable,
  headers: IncomingHttpHeaders,
  respond: () => ServerResponse,
  limits: McpBodyLimits,
  onRead: (raw: McpRawBody) => void,
): void {
  const limit = limits.maxBytes;
  const discardLimit = discardLimitOf(limit);
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > discardLimit)
    return refuseAndClose(respond(), 413, tooLargeMessage(limit));
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const deadlines = deadlinesOf(limits);
  const settle = () => {
    done = true;
    deadlines.settle(deadline);
    body.off('data', onData);
  };
  // `settle` ends this deadline, so it only falls while the body is still being read.
  const deadline = deadlines.start(() => {
    settle();
    refuseAndClose(respond(), 408, `Request Timeout: the body did not arrive within ${limits.timeoutMs} ms`);
  });
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) {
      chunks.push(chunk);
    } else if (size <= discardLimit) {
      chunks.length = 0; // over the limit: keep reading to answer cleanly, keep nothing
    } else {
      settle();
      refuseAndClose(respond(), 413, tooLargeMessage(limit));
    }
  };
  body.on('data', onData);
  // Plain listeners, not `once`: each ends in `done`, which makes any later call a no-op, and an
  // 'error' after the body was read still finds a listener.
  body.on('end', () => {
    if (done) return;
    settle();
    if (size > limit) return sendRpcError(respond(), 413, TRANSPORT_ERROR_CODE, tooLargeMessage(limit));
    // The usual body comes in one chunk: decoded as it is, without a copy.
    const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
    onRead({ ok: true, text });
  });
  const onAbort = () => {
    if (done) return;
    settle();
    onRead({ ok: false, reason: 'aborted' });
  };
  body.on('error', onAbort);
  body.on('aborted', onAbort);
}

/**
 * True when the reader takes this request's body: a POST always; any other method only when it
 * announces a body. The endpoint ignores the body of a GET or DELETE, but left to the host's
 * parser it would be read without the module's deadline (Fastify sets none by default), so a
 * client could stall one for as long as it likes.
 */
export function readsMcpBody(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (method === 'POST') return true;
  if (headers['transfer-encoding'] !== undefined) return true;
  const declared = Number(headers['content-length']);
  return Number.isFinite(declared) && declared > 0;
}

/** The Express request as the reader middleware sees it. */
type ExpressRequest = McpRequest & Readable & { method: string; path: string };

/**
 * Express middleware that reads the raw body of POSTs (and of other requests that carry one,
 * `readsMcpBody`) to MCP paths (`readMcpBody`) and keeps it on the request. A fully read request
 * stream is what makes the app's parsers skip the request.
 */
export function createMcpBodyReader(limitsFor: (path: string) => McpBodyLimits | null) {
  return function mcpBodyReader(req: ExpressRequest, res: ServerResponse, next: () => void): void {
    const limits = readsMcpBody(req.method, req.headers) ? limitsFor(req.path) : null;
    if (limits === null) return next();
    keepMcpBody(req, res, limits, next);
  };
}

/**
 * Reads the body of a Node request under `limits` (`readMcpBody`, answering on `res` when it
 * refuses), keeps what it found on the request for the endpoint, then calls `then`.
 */
export function keepMcpBody(
  req: McpRequest & Readable,
  res: ServerResponse,
  limits: McpBodyLimits,
  then: () => void,
): void {
  readMcpBody(
    req,
    req.headers,
    () => res,
    limits,
    (raw) => {
      req[MCP_RAW_BODY] = raw;
      then();
    },
  );
}

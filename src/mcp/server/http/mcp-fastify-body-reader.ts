import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { MCP_RAW_BODY, readMcpBody, readsMcpBody, type McpBodyLimits, type McpRequest } from './mcp-body-reader';
import { nodeResponseOf } from './mcp-http-adapter';

/** Marks the hooks the module installs itself (the body reader's), which the fast path does in its own way. */
export const MCP_OWN_FASTIFY_HOOK = Symbol('mcp:own-fastify-hook');

/** Marks `hook` as one of the module's own (see `MCP_OWN_FASTIFY_HOOK`) and returns it. */
export function ownFastifyHook<T extends (...args: never[]) => unknown>(hook: T): T {
  (hook as unknown as Record<symbol, boolean>)[MCP_OWN_FASTIFY_HOOK] = true;
  return hook;
}

/** What a `preParsing` hook calls when it is done: with an error, or with the payload to parse. */
type PreParsingDone = (error: Error | null, payload?: Readable) => void;

/** The part of a Fastify instance the reader is installed on. */
export interface FastifyHooksLike {
  addHook(
    name: 'preParsing',
    hook: (request: FastifyRequestLike, reply: object, payload: Readable, done: PreParsingDone) => void,
  ): unknown;
  addHook(name: 'preValidation', hook: (request: FastifyRequestLike, reply: object, done: () => void) => void): unknown;
}

/** The part of a Fastify request the reader uses. */
interface FastifyRequestLike extends McpRequest {
  method: string;
  url: string;
  /** The route the router chose; its `url` is the registered path, undefined when nothing matched (404). */
  routeOptions?: { url?: string };
  raw: IncomingMessage;
  [HIDDEN_HEADERS]?: Record<string, string | string[] | undefined>;
}

/** Where the body headers of a request whose body the reader took wait while Fastify parses. */
const HIDDEN_HEADERS = Symbol('mcp:hidden-body-headers');

/** The headers by which Fastify decides that a request has a body to parse. */
const BODY_HEADERS = ['content-type', 'content-length', 'transfer-encoding'];

/**
 * The path a request is looked up by: the path of the route Fastify chose (the hooks run after
 * routing), which is what decides whether the controller gets the request whatever the URL's
 * spelling (`/m%63p` is routed to `/mcp`); the URL's path when no route matched.
 */
function routedPathOf(request: FastifyRequestLike): string {
  return request.routeOptions?.url ?? request.url.split('?', 1)[0];
}

/**
 * Installs the MCP body reader on a Fastify instance, the counterpart of the Express middleware:
 * a `preParsing` hook reads the body of POSTs (and of other requests that carry one) routed to MCP
 * paths (`readMcpBody`, same limits, same 413 and 408 answers) before Fastify's content-type
 * parsers run. Fastify parses every request that announces a body, and would refuse a content
 * type it has no parser for (415) or malformed JSON (400) with its own answers, under its own
 * `bodyLimit` and without a deadline (its `requestTimeout` is 0 by default); so while its parsing
 * step runs, the request's body headers are set aside, and a `preValidation` hook (the next step)
 * puts them back before any guard or the controller reads them. The controller then finds the
 * body where the Express reader leaves it.
 */
export function installFastifyBodyReader(
  instance: FastifyHooksLike,
  limitsFor: (path: string) => McpBodyLimits | null,
): void {
  instance.addHook(
    'preParsing',
    ownFastifyHook((request: FastifyRequestLike, reply: object, payload: Readable, done: PreParsingDone) => {
      const limits = readsMcpBody(request.method, request.headers) ? limitsFor(routedPathOf(request)) : null;
      if (limits === null) return done(null, payload);
      readMcpBody(
        payload,
        request.headers,
        () => nodeResponseOf(reply),
        limits,
        (raw) => {
          request[MCP_RAW_BODY] = raw;
          const headers = request.raw.headers;
          const hidden: Record<string, string | string[] | undefined> = {};
          for (const name of BODY_HEADERS) {
            if (headers[name] === undefined) continue;
            hidden[name] = headers[name];
            delete headers[name];
          }
          request[HIDDEN_HEADERS] = hidden;
          done(null, payload);
        },
      );
    }),
  );
  instance.addHook(
    'preValidation',
    ownFastifyHook((request: FastifyRequestLike, _reply: object, done: () => void) => {
      const hidden = request[HIDDEN_HEADERS];
      if (hidden) {
        Object.assign(request.raw.headers, hidden);
        delete request[HIDDEN_HEADERS];
      }
      done();
    }),
  );
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { mcpPathKey } from './mcp-body-reader-installer';

/** The Express app a fast-path request was taken from (see `hostRequestOf`). */
export const MCP_EXPRESS_APP = Symbol('mcp:express-app');

/** The part of an Express 5 router layer the fast path reads. */
export interface ExpressLayerLike {
  /** The middleware function's name (`<anonymous>` for an anonymous one). */
  name: string;
  /** The middleware or route dispatcher; four parameters make an error handler. */
  handle: (...args: never[]) => unknown;
  /** Set on a route's layer. */
  route?: { path: string | string[]; methods: Record<string, boolean | undefined> };
  /** Whether the layer's path matches `path` (a middleware's path matches as a prefix). */
  match(path: string): unknown;
}

/** The part of an Express 5 app the fast path reads. */
export interface ExpressAppLike {
  /** The app's router: its middleware and routes, in the order they run. */
  router?: { stack: ExpressLayerLike[] };
  /** The prototype of the app's requests. */
  request: object;
  /** Whether a boolean setting is on (`x-powered-by`). */
  enabled(setting: string): boolean;
}

/**
 * Middleware that never acts on a POST to a mount: the MCP body reader itself, the body parsers
 * (the reader has taken the body before them), static files (GET and HEAD only).
 */
const BLIND_MIDDLEWARE = new Set([
  'mcpBodyReader',
  'jsonParser',
  'urlencodedParser',
  'rawParser',
  'textParser',
  'serveStatic',
]);

/**
 * The middleware Nest's Express adapter puts first in every app it creates: it runs the adapter's
 * request and response hooks, and only calls `next()` while neither is set.
 */
function isAdapterHookLayer(layer: ExpressLayerLike): boolean {
  return layer.name === '<anonymous>' && /\bonRequestHook\b/.test(String(layer.handle));
}

/** The route layer that serves a mount's POSTs on the fast path, or what keeps them on the Nest route. */
export type McpFastPathPlan =
  { route: ExpressLayerLike; obstacle?: undefined } | { route?: undefined; obstacle: string };

/** The path or paths an Express route was registered at. */
export function routePaths(route: NonNullable<ExpressLayerLike['route']>): string[] {
  return Array.isArray(route.path) ? route.path : [route.path];
}

/**
 * True for a route layer of `method` alone (at the path of `beside`, when given). The mount's
 * controller registers its POST, GET and DELETE routes in that order, one after the other: that
 * run of three is how its POST route is told from a host's route at the same path.
 */
function routeOnly(layer: ExpressLayerLike | undefined, method: string, beside?: ExpressLayerLike): boolean {
  const route = layer?.route;
  if (!route) return false;
  const methods = Object.keys(route.methods).filter((name) => route.methods[name]);
  if (methods.length !== 1 || methods[0] !== method) return false;
  return !beside || routePaths(route).join('\n') === routePaths(beside.route!).join('\n');
}

function handlesPost(route: NonNullable<ExpressLayerLike['route']>): boolean {
  return route.methods.post === true || route.methods._all === true;
}

/**
 * Decides whether a mount's POSTs can skip Express's router: walks the router's stack up to the
 * mount's POST route (the layer whose path is one of `mountKeys`, see `mcpPathKey`) and finds
 * anything that would see those POSTs first: a middleware whose path matches the mount's, or
 * another route that takes them. `enhancers` names the app's global guards and interceptors,
 * which run on every route. `adapterHooksIdle`: Nest's adapter has no request or response hook
 * set, so its own first middleware only passes requests on. Nothing found: the route layer,
 * whose own matcher then picks the requests (every spelling Express routes to it, no other).
 */
export function planExpressFastPath(
  stack: readonly ExpressLayerLike[],
  mountKeys: readonly string[],
  enhancers: readonly string[],
  adapterHooksIdle: boolean,
): McpFastPathPlan {
  if (enhancers.length > 0) return { obstacle: `the app's global ${enhancers.join(', ')}` };
  const ours = stack.findIndex(
    (layer, index) =>
      routeOnly(layer, 'post') &&
      routePaths(layer.route!).some((path) => mountKeys.includes(mcpPathKey(path))) &&
      routeOnly(stack[index + 1], 'get', layer) &&
      routeOnly(stack[index + 2], 'delete', layer),
  );
  if (ours < 0) return { obstacle: "the mount's POST route is not in Express's router at its path" };
  const paths = routePaths(stack[ours].route!);
  for (const layer of stack.slice(0, ours)) {
    if (layer.handle.length > 3) continue; // an error handler: it sees no request that did not fail
    if (!paths.some((path) => layer.match(path))) continue;
    if (layer.route) {
      if (handlesPost(layer.route))
        return { obstacle: `the app's route ${routePaths(layer.route).join(', ')} ahead of it` };
      continue;
    }
    if (adapterHooksIdle && isAdapterHookLayer(layer)) continue;
    if (!BLIND_MIDDLEWARE.has(layer.name)) return { obstacle: `the middleware ${layer.name} on its path` };
  }
  return { route: stack[ours] };
}

/**
 * The request an authorizer is handed. A request the fast path took is Node's own: the
 * authorizer gets an Express request made for it (the app's request prototype over the same
 * headers, URL and socket, so `req.ip`, `req.get()` and `req.query` answer as on the Nest
 * route), made only when the authorizer asks for it. Any other request is returned as it is.
 */
export function hostRequestOf<T extends object>(req: T): T {
  const app = (req as { [MCP_EXPRESS_APP]?: ExpressAppLike })[MCP_EXPRESS_APP];
  if (!app) return req;
  const node = req as unknown as IncomingMessage & { res?: ServerResponse };
  const view = Object.create(app.request) as Record<string, unknown>;
  view.app = app;
  view.res = node.res;
  view.headers = node.headers;
  view.rawHeaders = node.rawHeaders;
  view.method = node.method;
  view.url = node.url;
  view.originalUrl = node.url;
  view.baseUrl = '';
  view.params = {};
  view.httpVersion = node.httpVersion;
  view.socket = node.socket;
  view.connection = node.socket;
  return view as T;
}

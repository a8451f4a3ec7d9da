import {
  ForbiddenException,
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
  type OnApplicationBootstrap,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { keepMcpBody, type McpBodyLimits, type McpRequest } from './mcp-body-reader';
import { applicationConfigOf, mcpMountPathKeys, mcpPathKey } from './mcp-body-reader-installer';
import { McpHttpEndpoint } from './mcp-http.endpoint';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter';
import { McpOriginGuard } from './mcp-origin.guard';

/** The token of a mount's bearer guard, which the fast path runs as the Nest route does. */
export const MCP_BEARER_GUARD = Symbol('mcp:bearer-guard');

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

function routePaths(route: NonNullable<ExpressLayerLike['route']>): string[] {
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

/** The names of the app's global guards and interceptors. */
function globalEnhancersOf(moduleRef: ModuleRef): string[] {
  const config = applicationConfigOf(moduleRef);
  if (!config?.getGlobalGuards) return [];
  type Wrapper = { metatype?: { name?: string } | null; name?: unknown };
  const named = (kind: string, instances: object[], wrappers: Wrapper[]) => [
    ...instances.map((instance) => `${kind} ${instance.constructor.name}`),
    ...wrappers.map((wrapper) => `${kind} ${wrapper.metatype?.name ?? String(wrapper.name)}`),
  ];
  return [
    ...named('guard', config.getGlobalGuards(), config.getGlobalRequestGuards?.() ?? []),
    ...named('interceptor', config.getGlobalInterceptors?.() ?? [], config.getGlobalRequestInterceptors?.() ?? []),
  ];
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

/** The execution context the mount's guards and exception filter get on the fast path (the HTTP one Nest gives them). */
class FastPathContext {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly controller: Type<unknown>,
    private readonly handler: (...args: never[]) => unknown,
  ) {}

  switchToHttp() {
    return { getRequest: () => this.req, getResponse: () => this.res, getNext: () => undefined };
  }

  switchToRpc(): never {
    throw new Error('An MCP request is an HTTP request');
  }

  switchToWs(): never {
    throw new Error('An MCP request is an HTTP request');
  }

  getType(): 'http' {
    return 'http';
  }

  getArgs(): unknown[] {
    return [this.req, this.res, undefined];
  }

  getArgByIndex(index: number): unknown {
    return this.getArgs()[index];
  }

  getClass(): Type<unknown> {
    return this.controller;
  }

  getHandler(): (...args: never[]) => unknown {
    return this.handler;
  }
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A mount served on the fast path: its route layer (the matcher) and what serves a request. */
interface FastPathDoor {
  paths: Set<string>;
  route: ExpressLayerLike;
  serve: Listener;
}

/**
 * Stands in for the Express app among the server's request listeners, in its place (the other
 * listeners, such as the drain's connection tracker, still see every request): a POST one of
 * the fast paths takes is served by it, anything else goes to the Express app.
 */
class FastPathDispatcher {
  private readonly doors: FastPathDoor[] = [];

  constructor(server: Server, app: Listener) {
    const listeners = server.listeners('request') as Listener[];
    const dispatch = (req: IncomingMessage, res: ServerResponse) => {
      if (req.method === 'POST' && this.take(req, res)) return;
      app(req, res);
    };
    server.removeAllListeners('request');
    for (const listener of listeners) server.on('request', listener === app ? dispatch : listener);
  }

  add(door: FastPathDoor): void {
    this.doors.push(door);
  }

  private take(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    for (const door of this.doors) {
      if (door.paths.has(path) || door.route.match(path)) {
        door.serve(req, res);
        return true;
      }
    }
    return false;
  }
}

const dispatchers = new WeakMap<Server, FastPathDispatcher>();

/** The controller and handler a mount's guards see in their execution context. */
export interface McpFastPathRoute {
  /** The mount's controller class. */
  controller: Type<unknown>;
  /** Its POST handler. */
  handler: (...args: never[]) => unknown;
}

/** The token of a mount's controller route, for the guards' execution context. */
export const MCP_FAST_PATH_ROUTE = Symbol('mcp:fast-path-route');

/**
 * Serves a mount's POSTs on Express ahead of the router (`advanced.expressFastPath`), when
 * `planExpressFastPath` finds nothing else of the app that would see them. A POST it takes goes
 * through the same steps as on the Nest route, in the same order: the body reader (413, 408),
 * the origin guard, the bearer guard, the endpoint, and the mount's exception filter for
 * whatever they throw. Express's own per-request work (its request and response prototypes, the
 * router's walk) is what it skips; `X-Powered-By` is still set when the app sets it.
 */
@Injectable()
export class McpExpressFastPath implements OnApplicationBootstrap {
  private readonly logger = new Logger('McpModule');
  private readonly filter = new McpHttpExceptionFilter();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    private readonly endpoint: McpHttpEndpoint,
    private readonly origin: McpOriginGuard,
    @Inject(MCP_BEARER_GUARD) private readonly bearer: CanActivate,
    @Inject(MCP_FAST_PATH_ROUTE) private readonly controllerRoute: McpFastPathRoute,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** @inheritdoc */
  onApplicationBootstrap(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter?.getType() !== 'express') return;
    const where = `mount "${this.options.mount}"`;
    if (!this.options.expressFastPath) {
      this.logger.log(`${where}: POSTs take the Nest route, advanced.expressFastPath is false`);
      return;
    }
    const server = adapter.getHttpServer() as Server | undefined;
    const app = adapter.getInstance<ExpressAppLike>();
    if (!server || !app.router) return;
    if (!dispatchers.has(server) && !server.listeners('request').includes(app as unknown as Listener)) {
      this.logger.log(
        `${where}: POSTs take the Nest route, the HTTP server does not hand its requests to the Express app`,
      );
      return;
    }
    const keys = mcpMountPathKeys(this.options.path, this.moduleRef);
    const hooks = adapter as unknown as { onRequestHook?: unknown; onResponseHook?: unknown };
    const plan = planExpressFastPath(
      app.router.stack,
      keys,
      globalEnhancersOf(this.moduleRef),
      !hooks.onRequestHook && !hooks.onResponseHook,
    );
    if (!plan.route) {
      this.logger.log(`${where}: POSTs take the Nest route, seen by ${plan.obstacle}`);
      return;
    }
    let dispatcher = dispatchers.get(server);
    if (!dispatcher) {
      dispatcher = new FastPathDispatcher(server, app as unknown as Listener);
      dispatchers.set(server, dispatcher);
    }
    const limits: McpBodyLimits = { maxBytes: this.options.maxBodyBytes, timeoutMs: this.options.bodyTimeoutMs };
    const poweredBy = app.enabled('x-powered-by');
    dispatcher.add({
      paths: new Set(routePaths(plan.route.route!)),
      route: plan.route,
      serve: (req, res) => {
        if (poweredBy) res.setHeader('X-Powered-By', 'Express');
        (req as IncomingMessage & { res?: ServerResponse }).res = res;
        (req as { [MCP_EXPRESS_APP]?: ExpressAppLike })[MCP_EXPRESS_APP] = app;
        keepMcpBody(req, res, limits, () => this.admit(req, res));
      },
    });
    this.logger.log(
      `${where}: POSTs to ${routePaths(plan.route.route!).join(', ')} are served ahead of Express's router`,
    );
  }

  /** The guards, in the Nest route's order; then the endpoint. */
  private admit(req: IncomingMessage, res: ServerResponse): void {
    const context = new FastPathContext(
      req,
      res,
      this.controllerRoute.controller,
      this.controllerRoute.handler,
    ) as unknown as ExecutionContext;
    let admitted: boolean | Promise<boolean>;
    try {
      if (!this.origin.canActivate(context)) throw new ForbiddenException('Forbidden resource');
      admitted = this.bearer.canActivate(context) as boolean | Promise<boolean>;
    } catch (error) {
      return this.refuse(error, context);
    }
    if (admitted === true) return this.post(req, res, context);
    Promise.resolve(admitted).then(
      (granted) =>
        granted ? this.post(req, res, context) : this.refuse(new ForbiddenException('Forbidden resource'), context),
      (error: unknown) => this.refuse(error, context),
    );
  }

  private post(req: IncomingMessage, res: ServerResponse, context: ExecutionContext): void {
    this.endpoint.post(req as McpRequest, res).catch((error: unknown) => this.refuse(error, context));
  }

  /** What the mount's exception filter answers; a filter that fails itself leaves the connection to be cut. */
  private refuse(error: unknown, context: ExecutionContext): void {
    try {
      this.filter.catch(error, context);
    } catch (failure) {
      this.logger.error(`mount "${this.options.mount}": the exception filter failed`, (failure as Error)?.stack);
      context.switchToHttp().getResponse<ServerResponse>().destroy();
    }
  }
}

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
import { authorizerTakesRequest } from '../config/mcp-authorizer-kind';
import type { McpResolvedOptions } from '../config/mcp.options';
import { keepMcpBody, type McpBodyLimits, type McpRequest } from './mcp-body-reader';
import { applicationConfigOf, mcpMountPathKeys } from './mcp-body-reader-installer';
import { MCP_EXPRESS_APP, planExpressFastPath, routePaths, type ExpressAppLike } from './mcp-express-fast-path';
import {
  fastifyRoutesOf,
  fastifyWantsRequests,
  planFastifyFastPath,
  type FastifyInstanceLike,
  type NestFastifyAdapterLike,
} from './mcp-fastify-fast-path';
import { McpHttpEndpoint } from './mcp-http.endpoint';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter';
import { McpOriginGuard } from './mcp-origin.guard';

/** The token of a mount's bearer guard, which the fast path runs as the Nest route does. */
export const MCP_BEARER_GUARD = Symbol('mcp:bearer-guard');

/** The controller and handler a mount's guards see in their execution context. */
export interface McpFastPathRoute {
  /** The mount's controller class. */
  controller: Type<unknown>;
  /** Its POST handler. */
  handler: (...args: never[]) => unknown;
}

/** The token of a mount's controller route, for the guards' execution context. */
export const MCP_FAST_PATH_ROUTE = Symbol('mcp:fast-path-route');

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

/** How the boot line gives what a plan found: what would see the POSTs, or that the route is missing. */
function obstacleText(obstacle: string): string {
  return obstacle.startsWith("the mount's POST route") ? obstacle : `seen by ${obstacle}`;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** The path of a request's URL (without its query), as the fast paths match it. */
function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** A mount served on the fast path: which POSTs it takes (by the URL's path) and what serves one. */
interface FastPathDoor {
  takes(path: string): boolean;
  serve: Listener;
}

/**
 * Stands in for the app's request handler (the Express app, Fastify's router) among the
 * server's request listeners, in its place (the other listeners, such as the drain's connection
 * tracker, still see every request): a POST one of the fast paths takes is served by it,
 * anything else goes to the app.
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
    const path = requestPath(req);
    for (const door of this.doors) {
      if (door.takes(path)) {
        door.serve(req, res);
        return true;
      }
    }
    return false;
  }
}

const dispatchers = new WeakMap<Server, FastPathDispatcher>();

/** The part of a Fastify instance the fast path uses. */
interface FastifyLike {
  /** The server's request handler (Fastify's router). */
  routing?: Listener;
  addHook(name: 'onReady', hook: () => void): unknown;
}

/**
 * Serves a mount's POSTs ahead of the app's router (`advanced.fastPath`), on Express and on
 * Fastify, when nothing else of the app would see them on the Nest route (`planExpressFastPath`,
 * `planFastifyFastPath`). A POST it takes goes through the same steps as on the Nest route, in
 * the same order: the body reader (413, 408), the origin guard, the bearer guard, the endpoint,
 * and the mount's exception filter for whatever they throw. The framework's own per-request work
 * (Express's request and response prototypes and router walk; Fastify's routing, request and
 * reply objects and hooks; Nest's route handler) is what it skips. On Express, `X-Powered-By` is
 * still set when the app sets it.
 */
@Injectable()
export class McpFastPath implements OnApplicationBootstrap {
  private readonly logger = new Logger('McpModule');
  private readonly filter = new McpHttpExceptionFilter();
  private readonly limits: McpBodyLimits;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    private readonly endpoint: McpHttpEndpoint,
    private readonly origin: McpOriginGuard,
    @Inject(MCP_BEARER_GUARD) private readonly bearer: CanActivate,
    @Inject(MCP_FAST_PATH_ROUTE) private readonly controllerRoute: McpFastPathRoute,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {
    this.limits = { maxBytes: options.maxBodyBytes, timeoutMs: options.bodyTimeoutMs };
  }

  /** @inheritdoc */
  onApplicationBootstrap(): void {
    const adapter = this.adapterHost?.httpAdapter;
    const type = adapter?.getType();
    if (type !== 'express' && type !== 'fastify') return;
    if (!this.options.fastPath) {
      this.onNestRoute('advanced.fastPath is false');
      return;
    }
    if (type === 'express') this.planExpress();
    else this.planFastify();
  }

  private get where(): string {
    return `mount "${this.options.mount}"`;
  }

  private onNestRoute(why: string): void {
    this.logger.log(`${this.where}: POSTs take the Nest route, ${why}`);
  }

  /** The dispatcher of `server`, put in the place of `app` among its request listeners; undefined when `app` is not among them. */
  private dispatcherOf(server: Server, app: Listener): FastPathDispatcher | undefined {
    let dispatcher = dispatchers.get(server);
    if (dispatcher) return dispatcher;
    if (!server.listeners('request').includes(app)) return undefined;
    dispatcher = new FastPathDispatcher(server, app);
    dispatchers.set(server, dispatcher);
    return dispatcher;
  }

  private planExpress(): void {
    const adapter = this.adapterHost.httpAdapter;
    const server = adapter.getHttpServer() as Server | undefined;
    const app = adapter.getInstance<ExpressAppLike>();
    if (!server || !app.router) return;
    const hooks = adapter as unknown as { onRequestHook?: unknown; onResponseHook?: unknown };
    const plan = planExpressFastPath(
      app.router.stack,
      mcpMountPathKeys(this.options.path, this.moduleRef),
      globalEnhancersOf(this.moduleRef),
      !hooks.onRequestHook && !hooks.onResponseHook,
    );
    if (!plan.route) return this.onNestRoute(obstacleText(plan.obstacle));
    const dispatcher = this.dispatcherOf(server, app as unknown as Listener);
    if (!dispatcher) return this.onNestRoute('the HTTP server does not hand its requests to the Express app');
    const route = plan.route;
    const paths = new Set(routePaths(route.route!));
    const poweredBy = app.enabled('x-powered-by');
    dispatcher.add({
      takes: (path) => paths.has(path) || !!route.match(path),
      serve: (req, res) => {
        if (poweredBy) res.setHeader('X-Powered-By', 'Express');
        (req as IncomingMessage & { res?: ServerResponse }).res = res;
        (req as { [MCP_EXPRESS_APP]?: ExpressAppLike })[MCP_EXPRESS_APP] = app;
        keepMcpBody(req, res, this.limits, () => this.admit(req, res));
      },
    });
    this.logger.log(`${this.where}: POSTs to ${[...paths].join(', ')} are served ahead of Express's router`);
  }

  /**
   * On Fastify the plan waits for `onReady`: only then are every plugin's hooks and every route
   * known. An authorizer that takes the request keeps the POSTs on the Nest route, where it gets
   * Fastify's request.
   */
  private planFastify(): void {
    const adapter = this.adapterHost.httpAdapter;
    const instance = adapter.getInstance<FastifyLike & FastifyInstanceLike>();
    if (authorizerTakesRequest(this.options.auth)) {
      return this.onNestRoute("the auth authorizer takes the request (it gets Fastify's request there)");
    }
    const open = () => {
      try {
        this.openFastify(instance, adapter as unknown as NestFastifyAdapterLike);
      } catch (error) {
        this.onNestRoute(`the fast path could not read Fastify's routes (${(error as Error)?.message ?? error})`);
      }
    };
    try {
      instance.addHook('onReady', open);
    } catch {
      this.onNestRoute('Fastify was ready before the module could look at its routes');
    }
  }

  private openFastify(instance: FastifyLike & FastifyInstanceLike, adapter: NestFastifyAdapterLike): void {
    const plan = planFastifyFastPath(
      instance,
      fastifyRoutesOf(instance),
      mcpMountPathKeys(this.options.path, this.moduleRef),
      globalEnhancersOf(this.moduleRef),
      adapter,
    );
    if (!plan.urls) return this.onNestRoute(obstacleText(plan.obstacle));
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server | undefined;
    const dispatcher = server && instance.routing ? this.dispatcherOf(server, instance.routing) : undefined;
    if (!dispatcher) return this.onNestRoute("the HTTP server does not hand its requests to Fastify's router");
    const urls = new Set(plan.urls);
    const fastifyWants = fastifyWantsRequests(instance);
    dispatcher.add({
      takes: (path) => urls.has(path) && !fastifyWants(),
      serve: (req, res) => keepMcpBody(req, res, this.limits, () => this.admit(req, res)),
    });
    this.logger.log(`${this.where}: POSTs to ${plan.urls.join(', ')} are served ahead of Fastify's router`);
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

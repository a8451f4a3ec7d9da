import { tracingChannel } from 'node:diagnostics_channel';
import { mcpPathKey } from './mcp-body-reader-installer';
import { MCP_OWN_FASTIFY_HOOK } from './mcp-fastify-body-reader';

/** A Fastify hook function, as `addHook` and route options take it. */
type FastifyHook = (...args: never[]) => unknown;

/** The hooks of Fastify's request lifecycle: any of them on a route runs for its requests. */
const LIFECYCLE_HOOKS = [
  'onRequest',
  'preParsing',
  'preValidation',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onRequestAbort',
] as const;

/** The part of a Fastify instance (the root, or the one a route was added on) the plan reads. */
export type FastifyInstanceLike = object;

/** A route as Fastify's `onRoute` hook showed it, with the instance it was added on. */
export interface FastifyRouteSeen {
  /** The instance the route was added on (its hooks run for the route). */
  instance: FastifyInstanceLike;
  /** The full URL the route was registered at (prefixes included). */
  url: string;
  /** Its methods. */
  methods: string[];
  /** The route's own options: constraints, handler timeout, route-level hooks. */
  options: Record<string, unknown>;
}

/** The part of a Fastify instance the route recording uses. */
interface FastifyOnRouteLike {
  addHook(
    name: 'onRoute',
    hook: (this: FastifyInstanceLike, route: { method: string | string[]; url: string }) => void,
  ): unknown;
}

/** The routes added at MCP paths, per Fastify root instance, in the order they were added. */
const routesSeen = new WeakMap<object, FastifyRouteSeen[]>();

/**
 * Records, with an `onRoute` hook, every route added at a path `isMcpPath` accepts, with the
 * instance it was added on: what `planFastifyFastPath` reads once Fastify is ready. It must be
 * installed before Nest registers the routes, after `narrowFastifyCatchAll` (whose narrowing it
 * then records).
 */
export function recordFastifyRoutes(instance: FastifyOnRouteLike, isMcpPath: (url: string) => boolean): void {
  const seen: FastifyRouteSeen[] = [];
  routesSeen.set(instance, seen);
  instance.addHook('onRoute', function record(this: FastifyInstanceLike, route) {
    if (!isMcpPath(route.url)) return;
    const methods = Array.isArray(route.method) ? [...route.method] : [route.method];
    seen.push({ instance: this, url: route.url, methods, options: route });
  });
}

/** The routes `recordFastifyRoutes` saw added on `instance` (none when it was not installed there). */
export function fastifyRoutesOf(instance: object): FastifyRouteSeen[] {
  return routesSeen.get(instance) ?? [];
}

/** The state of Nest's Fastify adapter the plan reads. */
export interface NestFastifyAdapterLike {
  onRequestHook?: unknown;
  onResponseHook?: unknown;
  corsHook?: unknown;
  versioningOptions?: unknown;
}

/** The POST URLs the fast path serves, or what keeps a mount's POSTs on the Nest route. */
export type McpFastifyFastPathPlan = { urls: string[]; obstacle?: undefined } | { urls?: undefined; obstacle: string };

/** The value of `instance`'s own symbol property described as `description` (Fastify and middie keep their state there). */
function symbolValue<T>(instance: object, description: string): T | undefined {
  const key = Object.getOwnPropertySymbols(instance).find((symbol) => symbol.description === description);
  return key === undefined ? undefined : (instance as Record<symbol, T>)[key];
}

function asArray(value: unknown): unknown[] {
  return value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
}

/**
 * What a hook of Nest's Fastify adapter means for the mount's POSTs: the adapter adds the same
 * few hooks to every app it creates (told apart by what they call), and each only acts while the
 * feature behind it is set up. `true`: it lets them through untouched; a string: the feature that
 * would see them; undefined: not one of the adapter's hooks.
 */
function adapterHookVerdict(hook: FastifyHook, adapter: NestFastifyAdapterLike): true | string | undefined {
  const source = Function.prototype.toString.call(hook);
  if (/\bthis\.onRequestHook\b/.test(source)) return !adapter.onRequestHook || "Nest's request hook";
  if (/\bthis\.onResponseHook\b/.test(source)) return !adapter.onResponseHook || "Nest's response hook";
  if (/\bthis\.corsHook\b/.test(source)) return !adapter.corsHook || "the app's CORS (enableCors)";
  // The request target check passes every path that starts with `/`: the fast path only takes the route's own path.
  if (/\bisRoutableRequestTarget\b/.test(source)) return true;
  // Errors of a custom versioning extractor: none without versioning, which keeps the Nest route anyway.
  if (/\bversionExtractorErrors\b/.test(source)) return !adapter.versioningOptions || "Nest's versioning";
  return undefined;
}

/** Whether `hook` is @fastify/middie's runner of Nest middleware (and of `app.use`). */
function isMiddie(hook: FastifyHook): boolean {
  return hook.name === 'runMiddie' || hook.name === 'runMiddieWithPayload';
}

/** Whether `hook` is middie's runner and the instance has no middleware for it to run. */
function idleMiddie(hook: FastifyHook, instance: FastifyInstanceLike): boolean {
  return isMiddie(hook) && symbolValue<boolean>(instance, 'fastify-middie-has-middlewares') === false;
}

/**
 * Whether Fastify was given a logger: without one, its logger is a null logger whose child is
 * itself (and Fastify then makes no logger per request).
 */
function hasLogger(root: FastifyInstanceLike): boolean {
  const log = (root as { log?: { child?: (bindings: object) => unknown } }).log;
  return typeof log?.child === 'function' && log.child({}) !== log;
}

/** True for a route of `method` alone. */
function routeOnly(route: FastifyRouteSeen | undefined, method: string, url?: string): boolean {
  return (
    !!route && route.methods.length === 1 && route.methods[0] === method && (url === undefined || route.url === url)
  );
}

/**
 * Decides whether a mount's POSTs can be served ahead of Fastify's router, once Fastify is ready
 * (every plugin loaded, every route's hooks known). `routes` are the routes added at the mount's
 * path keys (see `mcpPathKey`), in the order they were added: the mount's controller adds its
 * POST, GET and DELETE routes one after the other (Fastify adds a HEAD route after the GET),
 * which is how its POST route is told apart.
 * Anything else that would see those POSTs keeps them on the Nest route: a hook of any stage of
 * the request lifecycle other than the module's own, Nest's idle ones and an idle middie (so
 * `enableCors()`, Nest middleware, @fastify/helmet, rate limits, a global `onResponse`), the
 * app's global guards and interceptors (`enhancers`), Nest's versioning, route constraints,
 * Fastify's logger (it logs every request), `rewriteUrl` and `handlerTimeout`. Nothing found:
 * the URLs of the mount's POST route, which the fast path matches exactly.
 */
export function planFastifyFastPath(
  root: FastifyInstanceLike,
  routes: readonly FastifyRouteSeen[],
  mountKeys: readonly string[],
  enhancers: readonly string[],
  adapter: NestFastifyAdapterLike,
): McpFastifyFastPathPlan {
  if (enhancers.length > 0) return { obstacle: `the app's global ${enhancers.join(', ')}` };
  if (adapter.versioningOptions) return { obstacle: "Nest's versioning" };
  const options = symbolValue<Record<string, unknown>>(root, 'fastify.options') ?? {};
  if (hasLogger(root)) return { obstacle: "Fastify's logger, which logs every request" };
  if (options.rewriteUrl) return { obstacle: "Fastify's rewriteUrl" };
  if (Number(options.handlerTimeout) > 0) return { obstacle: "Fastify's handlerTimeout" };
  // Fastify adds a HEAD route beside each GET route (`exposeHeadRoutes`): not part of the run.
  const atMount = routes.filter(
    (route) =>
      mountKeys.includes(mcpPathKey(route.url)) && !(route.methods.length === 1 && route.methods[0] === 'HEAD'),
  );
  const ours = atMount.find(
    (route, index) =>
      routeOnly(route, 'POST') &&
      routeOnly(atMount[index + 1], 'GET', route.url) &&
      routeOnly(atMount[index + 2], 'DELETE', route.url),
  );
  if (!ours) return { obstacle: "the mount's POST route is not in Fastify's router at its path" };
  const others = atMount.filter((route) => route !== ours && route.methods.includes('POST'));
  if (others.length > 0) return { obstacle: `the app's POST route ${others.map((route) => route.url).join(', ')}` };
  const constraints = ours.options.constraints as object | undefined;
  if (constraints && Object.keys(constraints).length > 0) return { obstacle: 'constraints on its route' };
  if (Number(ours.options.handlerTimeout) > 0) return { obstacle: "the route's handlerTimeout" };
  const hooks = symbolValue<Record<string, FastifyHook[]>>(ours.instance, 'fastify.hooks') ?? {};
  for (const stage of LIFECYCLE_HOOKS) {
    for (const hook of [...asArray(hooks[stage]), ...asArray(ours.options[stage])] as FastifyHook[]) {
      if ((hook as unknown as Record<symbol, unknown>)[MCP_OWN_FASTIFY_HOOK]) continue;
      const verdict = adapterHookVerdict(hook, adapter);
      if (verdict === true || idleMiddie(hook, ours.instance)) continue;
      if (verdict !== undefined) return { obstacle: verdict };
      if (isMiddie(hook)) return { obstacle: 'Nest middleware (@fastify/middie)' };
      return { obstacle: `the ${stage} hook ${hook.name || '<anonymous>'}` };
    }
  }
  return { urls: [ours.url] };
}

/** Fastify's tracing channel of request handlers: while anyone listens, requests go through Fastify. */
const handlerTracing = tracingChannel('fastify.request.handler');

/**
 * Decides, per request, whether a POST the fast path could take must go through Fastify after
 * all: Fastify is closing (it answers 503 itself), or someone traces Fastify's handlers.
 */
export function fastifyWantsRequests(root: FastifyInstanceLike): () => boolean {
  const state = symbolValue<{ closing?: boolean }>(root, 'fastify.state');
  return () => state?.closing === true || handlerTracing.hasSubscribers;
}

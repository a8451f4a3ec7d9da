import middie from '@fastify/middie';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { installFastifyBodyReader } from './mcp-fastify-body-reader';
import {
  fastifyRoutesOf,
  fastifyWantsRequests,
  planFastifyFastPath,
  recordFastifyRoutes,
  type NestFastifyAdapterLike,
} from './mcp-fastify-fast-path';
import { mcpPathKey } from './mcp-body-reader-installer';

const KEYS = ['/mcp'];
const LIMITS = { maxBytes: 1024, timeoutMs: 1000 };
const handler = () => 'ok';

/** The routes a mount's controller adds: POST, GET, DELETE, then the catch-all of the other methods. */
function addMountRoutes(instance: FastifyInstance, url = '/mcp'): void {
  instance.post(url, handler);
  instance.get(url, handler);
  instance.delete(url, handler);
  instance.route({ method: ['PUT', 'PATCH'], url, handler });
}

/** A Fastify app prepared as the module prepares one (route recording, body reader), `build` adding the rest. */
async function plan(
  build: (instance: FastifyInstance) => void | Promise<void> = addMountRoutes,
  options: { fastify?: FastifyServerOptions; enhancers?: string[]; adapter?: NestFastifyAdapterLike } = {},
) {
  const instance = Fastify(options.fastify);
  recordFastifyRoutes(instance, (url) => KEYS.includes(mcpPathKey(url)));
  installFastifyBodyReader(instance, () => LIMITS);
  await build(instance);
  return planWhenReady(instance, options.enhancers ?? [], options.adapter ?? {});
}

/** The plan once `instance` is ready (closed after). */
async function planWhenReady(instance: FastifyInstance, enhancers: string[], adapter: NestFastifyAdapterLike) {
  await instance.ready();
  try {
    return planFastifyFastPath(instance, fastifyRoutesOf(instance), KEYS, enhancers, adapter);
  } finally {
    await instance.close();
  }
}

describe('planFastifyFastPath', () => {
  it("takes the mount's POST route of an app with nothing else on it, by its exact URL", async () => {
    expect(await plan()).toEqual({ urls: ['/mcp'] });
    // Hooks and routes of a sibling plugin do not run for the mount's route.
    expect(
      await plan(async (instance) => {
        addMountRoutes(instance);
        await instance.register(async (child) => {
          child.addHook('onRequest', async () => undefined);
          child.post('/elsewhere', handler);
        });
      }),
    ).toEqual({ urls: ['/mcp'] });
  });

  it('names a hook of any lifecycle stage that runs for the route: the app’s, a plugin’s that holds it, the route’s own', async () => {
    expect(
      await plan((instance) => {
        instance.addHook('onRequest', function audit(_request, _reply, done) {
          done();
        });
        addMountRoutes(instance);
      }),
    ).toEqual({ obstacle: 'the onRequest hook audit' });
    expect(
      await plan(async (instance) => {
        await instance.register(async (child) => {
          child.addHook('onResponse', async function timing() {});
          addMountRoutes(child);
        });
      }),
    ).toEqual({ obstacle: 'the onResponse hook timing' });
    expect(
      await plan((instance) => {
        instance.route({ method: 'POST', url: '/mcp', handler, preHandler: [async () => undefined] });
        instance.get('/mcp', handler);
        instance.delete('/mcp', handler);
      }),
    ).toEqual({ obstacle: 'the preHandler hook <anonymous>' });
  });

  it('lets middie through while it has no middleware, and names Nest middleware once it has', async () => {
    expect(
      await plan(async (instance) => {
        await instance.register(middie);
        addMountRoutes(instance);
      }),
    ).toEqual({ urls: ['/mcp'] });
    expect(
      await plan(async (instance) => {
        await instance.register(middie);
        instance.use((_req: unknown, _res: unknown, next: () => void) => next());
        addMountRoutes(instance);
      }),
    ).toEqual({ obstacle: 'Nest middleware (@fastify/middie)' });
  });

  it("tells the hooks of Nest's adapter by their feature: idle ones pass, a set one is named", async () => {
    const nestPlan = async (setup?: (adapter: FastifyAdapter) => void) => {
      const adapter = new FastifyAdapter();
      const instance = adapter.getInstance();
      recordFastifyRoutes(instance, (url) => KEYS.includes(mcpPathKey(url)));
      setup?.(adapter);
      addMountRoutes(instance);
      return planWhenReady(instance, [], adapter as unknown as NestFastifyAdapterLike);
    };
    expect(await nestPlan()).toEqual({ urls: ['/mcp'] });
    expect(await nestPlan((adapter) => adapter.enableCors({ origin: 'https://app.example' }))).toEqual({
      obstacle: "the app's CORS (enableCors)",
    });
    expect(await nestPlan((adapter) => adapter.setOnRequestHook((_req, _res, done) => done()))).toEqual({
      obstacle: "Nest's request hook",
    });
    expect(await nestPlan((adapter) => adapter.setOnResponseHook((_req, _res, done) => done()))).toEqual({
      obstacle: "Nest's response hook",
    });
  });

  it("keeps the Nest route for the app's enhancers, versioning, a logger, rewriteUrl and handlerTimeout", async () => {
    expect(await plan(addMountRoutes, { enhancers: ['guard ThrottlerGuard'] })).toEqual({
      obstacle: "the app's global guard ThrottlerGuard",
    });
    expect(await plan(addMountRoutes, { adapter: { versioningOptions: { type: 1 } } })).toEqual({
      obstacle: "Nest's versioning",
    });
    expect(await plan(addMountRoutes, { fastify: { logger: { level: 'silent' } } })).toEqual({
      obstacle: "Fastify's logger, which logs every request",
    });
    expect(await plan(addMountRoutes, { fastify: { rewriteUrl: (req) => req.url ?? '/' } })).toEqual({
      obstacle: "Fastify's rewriteUrl",
    });
    expect(await plan(addMountRoutes, { fastify: { handlerTimeout: 5000 } })).toEqual({
      obstacle: "Fastify's handlerTimeout",
    });
  });

  it('keeps the Nest route for constraints, another POST route at a spelling of the path, or no route at all', async () => {
    expect(
      await plan((instance) => {
        instance.route({ method: 'POST', url: '/mcp', handler, constraints: { host: 'mcp.example' } });
        instance.get('/mcp', handler);
        instance.delete('/mcp', handler);
      }),
    ).toEqual({ obstacle: 'constraints on its route' });
    expect(
      await plan((instance) => {
        instance.post('/MCP', handler);
        addMountRoutes(instance);
      }),
    ).toEqual({ obstacle: "the app's POST route /MCP" });
    expect(
      await plan((instance) => {
        instance.post('/mcp', handler);
      }),
    ).toEqual({
      obstacle: "the mount's POST route is not in Fastify's router at its path",
    });
  });
});

describe('fastifyWantsRequests', () => {
  it('hands the requests to Fastify once it is closing', async () => {
    const instance = Fastify();
    await instance.ready();
    const wants = fastifyWantsRequests(instance);
    expect(wants()).toBe(false);
    await instance.close();
    expect(wants()).toBe(true);
  });
});

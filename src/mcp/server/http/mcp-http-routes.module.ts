import { Inject, Module, type DynamicModule, type NestModule } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { mcpMountPathKeys, mcpPathKey } from './mcp-body-reader-installer';
import { recordFastifyRoutes } from './mcp-fastify-fast-path';
import { narrowFastifyCatchAll, type FastifyRoutesLike } from './mcp-fastify-routes';

/** The mount path the module prepares the router for. */
const MCP_ROUTES_PATH = Symbol('mcp:routes-path');

/** Mount path keys per Fastify instance, known before the routes are registered. */
const fastifyRoutePaths = new WeakMap<object, Set<string>>();

/**
 * Prepares the app's router for the routes of one mount. Nest calls a module's `configure`
 * (where middleware is declared) before it registers the controllers' routes, the only moment
 * a router hook can still see them: on Fastify, this is where the controller's catch-all route is
 * made to fit beside its GET, POST and DELETE routes (`narrowFastifyCatchAll`), and the routes
 * at MCP paths are recorded for the fast path (`recordFastifyRoutes`). Express needs nothing.
 */
@Module({})
export class McpHttpRoutesModule implements NestModule {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    @Inject(MCP_ROUTES_PATH) private readonly path: string,
  ) {}

  /** The module of the mount at `path`. */
  static forPath(path: string): DynamicModule {
    return { module: McpHttpRoutesModule, providers: [{ provide: MCP_ROUTES_PATH, useValue: path }] };
  }

  /** @inheritdoc */
  configure(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter?.getType() !== 'fastify') return;
    const app = adapter.getInstance<FastifyRoutesLike>();
    let keys = fastifyRoutePaths.get(app);
    if (!keys) {
      const known = new Set<string>();
      keys = known;
      fastifyRoutePaths.set(app, known);
      narrowFastifyCatchAll(app, (url) => known.has(mcpPathKey(url)));
      recordFastifyRoutes(app, (url) => known.has(mcpPathKey(url)));
    }
    for (const key of mcpMountPathKeys(this.path, this.moduleRef)) keys.add(key);
  }
}

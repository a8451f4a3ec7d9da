import {
  ForbiddenException,
  Injectable,
  Module,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestMiddleware,
  type NestModule,
  type Type,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import type { Observable } from 'rxjs';
import { MCP_ENTITIES, McpModule, McpTool, type McpAuthResult, type McpModuleOptions } from '../../src/mcp';
import { CapturingLogger } from '../support/capturing-logger';
import { refusalViews, REFUSAL_STATUSES } from '../support/fast-path-refusals';
import { callRequest, initializeRequest, openSession, post } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** What the authorizer read off the request it was handed, per call. */
const authorizerSaw: { ip: string | undefined; client: string | undefined; tenant: unknown; path: string }[] = [];

function authorize(token: string, request: Request): McpAuthResult | null | Promise<McpAuthResult | null> {
  authorizerSaw.push({
    ip: request.ip,
    client: request.get('x-client'),
    tenant: (request.query as { tenant?: unknown }).tenant,
    path: request.path,
  });
  if (token === 'token-boom') throw new Error('the token service is down for token-boom');
  if (token === 'token-later') return Promise.resolve({ key: 'later' });
  return token === 'token-alice' ? { key: 'alice' } : null;
}

@Injectable()
class EchoTools {
  @McpTool({ description: 'Echoes its text' })
  echo({ text }: { text: string }) {
    return text;
  }
}

/** How many requests a host's interceptor or middleware saw. */
const hostSaw = { interceptor: 0, middleware: 0 };

@Injectable()
class CountingInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    hostSaw.interceptor++;
    return next.handle();
  }
}

/** A host's global guard: refuses a request that carries `X-Block`. */
class BlockingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<Request>().headers['x-block'])
      throw new ForbiddenException('blocked by the host');
    return true;
  }
}

@Injectable()
class CountingMiddleware implements NestMiddleware {
  use(_req: Request, _res: Response, next: NextFunction) {
    hostSaw.middleware++;
    next();
  }
}

/** A host module whose middleware covers the routes `routes` names. */
function middlewareModule(routes: string): Type<unknown> {
  @Module({})
  class HostMiddlewareModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      consumer.apply(CountingMiddleware).forRoutes(routes);
    }
  }
  return HostMiddlewareModule;
}

interface Booted {
  app: INestApplication;
  url: string;
  /** The module's boot line about where the mount's POSTs go. */
  fastPathLine: string | undefined;
}

describe('the Express fast path of a mount (real app, PostgreSQL)', () => {
  let db: TestDatabase;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await db?.drop();
  });

  beforeEach(() => {
    hostSaw.interceptor = 0;
    hostSaw.middleware = 0;
    authorizerSaw.length = 0;
  });

  /** Boots an app on Express with the mount on `options`, `imports` and `providers` beside it; `setup` runs before it listens. */
  async function boot(
    setup?: (app: INestApplication) => void,
    metadata: { imports?: unknown[]; providers?: unknown[] } = {},
    options: Partial<McpModuleOptions> = {},
  ): Promise<Booted> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ auth: authorize, providers: [EchoTools], ...options }),
        ...((metadata.imports ?? []) as never[]),
      ],
      providers: [EchoTools, ...((metadata.providers ?? []) as never[])],
    }).compile();
    const logger = new CapturingLogger();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    setup?.(app);
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const prefix = (app as unknown as { config: { getGlobalPrefix(): string } }).config.getGlobalPrefix();
    return {
      app,
      url: `http://127.0.0.1:${port}${prefix ? `/${prefix}` : ''}/mcp`,
      fastPathLine: logger.lines.find((line) => line.includes('mount "default": POSTs')),
    };
  }

  /** Opens a session and calls `echo` through it; returns the call's reply. */
  async function echo(url: string, headers: Record<string, string> = {}) {
    const { sessionId } = await openSession(url);
    return post(url, callRequest(2, 'echo', { text: 'through' }), { sessionId, headers });
  }

  it('serves an app with nothing else on the path ahead of the router, with the same answers', async () => {
    let heard = 0;
    const { url, fastPathLine } = await boot((app) => {
      app.use('/elsewhere', (_req: Request, _res: Response, next: NextFunction) => next());
      // Another listener of the server's requests (as a connection tracker is) still hears every one.
      (app.getHttpServer() as Server).prependListener('request', () => heard++);
    });
    expect(fastPathLine).toContain("POSTs to /mcp are served ahead of Express's router");
    const reply = await echo(url);
    expect(reply.status).toBe(200);
    expect(heard).toBe(3);
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'through' }]);
    // Express's header, as the Nest route sends it.
    expect(reply.headers.get('x-powered-by')).toBe('Express');
    // Every spelling Express routes to the mount, and a query string.
    const { sessionId } = await openSession(url);
    for (const spelling of ['/MCP', '/mcp/', '/mcp?tenant=acme']) {
      const other = await post(url.replace(/\/mcp$/, spelling), callRequest(3, 'echo', { text: spelling }), {
        sessionId,
      });
      expect(other.json.result.content[0].text).toBe(spelling);
    }
    // A spelling Express routes nowhere still gets its 404.
    expect((await post(url.replace(/\/mcp$/, '/m%63p'), initializeRequest())).status).toBe(404);
  });

  it('hands the authorizer an Express request: ip, headers, query and path as on the Nest route', async () => {
    const fast = await boot();
    const nest = await boot(undefined, {}, { advanced: { fastPath: false } });
    expect(nest.fastPathLine).toContain('POSTs take the Nest route, advanced.fastPath is false');
    for (const { url } of [fast, nest]) {
      await post(`${url}?tenant=acme`, initializeRequest(), { headers: { 'X-Client': 'probe' } });
    }
    expect(authorizerSaw).toHaveLength(2);
    expect(authorizerSaw[0]).toEqual(authorizerSaw[1]);
    expect(authorizerSaw[0]).toEqual({
      ip: expect.stringMatching(/127\.0\.0\.1$/),
      client: 'probe',
      tenant: 'acme',
      path: '/mcp',
    });
  });

  it('answers refusals as the Nest route does: 401, a throwing authorizer, an async one, a bad origin, bad JSON, 413', async () => {
    const fast = await boot(undefined, {}, { advanced: { maxBodyBytes: 1024 } });
    const nest = await boot(undefined, {}, { advanced: { maxBodyBytes: 1024, fastPath: false } });
    const fastViews = await refusalViews(fast.url);
    expect(fastViews).toEqual(await refusalViews(nest.url));
    expect(fastViews.map((v) => v.status)).toEqual(REFUSAL_STATUSES);
    expect(fastViews.some((v) => v.leaked)).toBe(false);
  });

  it('stays on the Nest route when a host middleware covers the path, which then sees every POST', async () => {
    const { url, fastPathLine } = await boot((app) =>
      app.use(function tagging(_req: Request, res: Response, next: NextFunction) {
        res.setHeader('X-Host-Middleware', 'seen');
        next();
      }),
    );
    expect(fastPathLine).toContain('POSTs take the Nest route, seen by the middleware tagging on its path');
    const reply = await echo(url);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-host-middleware')).toBe('seen');
  });

  it("stays on the Nest route for the app's CORS, whose headers the POSTs then carry", async () => {
    const { url, fastPathLine } = await boot(
      (app) => app.enableCors({ origin: 'https://app.example' }),
      {},
      {
        allowedOrigins: ['https://app.example'],
      },
    );
    expect(fastPathLine).toContain('POSTs take the Nest route, seen by the middleware corsMiddleware on its path');
    const reply = await post(url, initializeRequest(), { headers: { Origin: 'https://app.example' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it("stays on the Nest route for the app's global interceptor and guard, which then run on every POST", async () => {
    const intercepted = await boot(undefined, {
      providers: [{ provide: APP_INTERCEPTOR, useClass: CountingInterceptor }],
    });
    expect(intercepted.fastPathLine).toContain("seen by the app's global interceptor CountingInterceptor");
    expect((await echo(intercepted.url)).status).toBe(200);
    expect(hostSaw.interceptor).toBe(3); // initialize, initialized, the call

    const guarded = await boot((app) => app.useGlobalGuards(new BlockingGuard()));
    expect(guarded.fastPathLine).toContain("seen by the app's global guard BlockingGuard");
    expect((await echo(guarded.url)).status).toBe(200);
    const blocked = await post(guarded.url, initializeRequest(), { headers: { 'X-Block': '1' } });
    expect(blocked.status).toBe(403);
    expect(blocked.text).toContain('blocked by the host');
  });

  it("follows the host's Nest middleware: on the Nest route when it covers the path, fast when it covers others", async () => {
    const everywhere = await boot(undefined, { imports: [middlewareModule('*')] });
    expect(everywhere.fastPathLine).toContain('POSTs take the Nest route, seen by the middleware');
    expect((await echo(everywhere.url)).status).toBe(200);
    expect(hostSaw.middleware).toBe(3);

    hostSaw.middleware = 0;
    const elsewhere = await boot(undefined, { imports: [middlewareModule('elsewhere')] });
    expect(elsewhere.fastPathLine).toContain("served ahead of Express's router");
    expect((await echo(elsewhere.url)).status).toBe(200);
    expect(hostSaw.middleware).toBe(0);
  });

  it("serves a mount under the app's global prefix, and leaves X-Powered-By out when the app does", async () => {
    const { url, fastPathLine } = await boot((app) => {
      app.setGlobalPrefix('api');
      (app.getHttpAdapter().getInstance() as { disable(setting: string): void }).disable('x-powered-by');
    });
    expect(fastPathLine).toContain("POSTs to /api/mcp are served ahead of Express's router");
    const reply = await echo(url);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-powered-by')).toBeNull();
  });
});

import {
  Injectable,
  Module,
  type CallHandler,
  type ExecutionContext,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestModule,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { tracingChannel } from 'node:diagnostics_channel';
import type { Observable } from 'rxjs';
import { MCP_ENTITIES, McpModule, McpTool, type McpAuthResult, type McpModuleOptions } from '../../src/mcp';
import { CapturingLogger } from '../support/capturing-logger';
import { refusalViews, REFUSAL_STATUSES } from '../support/fast-path-refusals';
import { callRequest, initializeRequest, openSession, post } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** An authorizer of the token alone, as most are: it never reads the request. */
function authorize(token: string): McpAuthResult | null | Promise<McpAuthResult | null> {
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

@Module({})
class CountingMiddlewareModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer
      .apply((_req: unknown, _res: unknown, next: () => void) => {
        hostSaw.middleware++;
        next();
      })
      .forRoutes('*');
  }
}

interface Booted {
  app: NestFastifyApplication;
  url: string;
  /** The module's boot line about where the mount's POSTs go. */
  fastPathLine: string | undefined;
}

describe('the Fastify fast path of a mount (real app, PostgreSQL)', () => {
  let db: TestDatabase;
  const apps: NestFastifyApplication[] = [];

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
  });

  /** Boots an app on Fastify with the mount on `options`, `imports` and `providers` beside it; `setup` runs before it listens. */
  async function boot(
    setup?: (app: NestFastifyApplication) => void | Promise<void>,
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
    const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger });
    apps.push(app);
    await setup?.(app);
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    return {
      app,
      url: `http://127.0.0.1:${port}/mcp`,
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
    const fast = await boot((app) => {
      // Another listener of the server's requests (as a connection tracker is) still hears every one.
      app.getHttpServer().prependListener('request', () => heard++);
    });
    expect(fast.fastPathLine).toContain("POSTs to /mcp are served ahead of Fastify's router");
    // Fastify's router is no longer the server's request listener: the fast path stands in its place.
    const fastify = fast.app.getHttpAdapter().getInstance();
    expect(fast.app.getHttpServer().listeners('request')).not.toContain(fastify.routing);
    const reply = await echo(fast.url);
    expect(reply.status).toBe(200);
    expect(heard).toBe(3);
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'through' }]);

    // A query string is the same path; other spellings go to Fastify, which answers as it does on the Nest route.
    const nest = await boot(undefined, {}, { advanced: { fastPath: false } });
    expect(nest.fastPathLine).toContain('POSTs take the Nest route, advanced.fastPath is false');
    const nestFastify = nest.app.getHttpAdapter().getInstance();
    expect(nest.app.getHttpServer().listeners('request')).toContain(nestFastify.routing);
    const answers = async (url: string) => {
      const { sessionId } = await openSession(url);
      const replies = [];
      for (const spelling of ['/mcp?tenant=acme', '/MCP', '/mcp/', '/m%63p']) {
        replies.push(
          await post(url.replace(/\/mcp$/, spelling), callRequest(3, 'echo', { text: spelling }), { sessionId }),
        );
      }
      return replies.map((r) => ({ status: r.status, text: r.json?.result?.content?.[0]?.text }));
    };
    const fastAnswers = await answers(fast.url);
    expect(fastAnswers).toEqual(await answers(nest.url));
    expect(fastAnswers[0]).toEqual({ status: 200, text: '/mcp?tenant=acme' });
  });

  it("serves the mount under the app's global prefix, and each of two mounts at its own path", async () => {
    const prefixed = await boot((app) => {
      app.setGlobalPrefix('api');
    });
    expect(prefixed.fastPathLine).toContain("POSTs to /api/mcp are served ahead of Fastify's router");
    const url = prefixed.url.replace(/\/mcp$/, '/api/mcp');
    expect((await echo(url)).json.result.content).toEqual([{ type: 'text', text: 'through' }]);

    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ auth: authorize, providers: [EchoTools] }),
        McpModule.forRoot({ mount: 'second', path: 'second/mcp', auth: authorize, providers: [EchoTools] }),
      ],
      providers: [EchoTools],
    }).compile();
    const logger = new CapturingLogger();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    expect(logger.lines.filter((line) => line.includes("are served ahead of Fastify's router"))).toHaveLength(2);
    for (const path of ['/mcp', '/second/mcp']) {
      expect((await echo(`http://127.0.0.1:${port}${path}`)).json.result.content[0].text).toBe('through');
    }
  });

  it('answers refusals as the Nest route does: 401, a throwing authorizer, an async one, a bad origin, bad JSON, 413, 415', async () => {
    const fast = await boot(undefined, {}, { advanced: { maxBodyBytes: 1024 } });
    const nest = await boot(undefined, {}, { advanced: { maxBodyBytes: 1024, fastPath: false } });
    expect(fast.fastPathLine).toContain('served ahead of');
    const fastViews = await refusalViews(fast.url);
    expect(fastViews).toEqual(await refusalViews(nest.url));
    expect(fastViews.map((v) => v.status)).toEqual(REFUSAL_STATUSES);
    expect(fastViews.some((v) => v.leaked)).toBe(false);
  });

  it('stays on the Nest route for an authorizer that takes the request, which then gets Fastify’s request', async () => {
    const seen: unknown[] = [];
    const { url, fastPathLine } = await boot(
      undefined,
      {},
      {
        auth: (token: string, request: { ip?: string; routeOptions?: { url?: string } }) => {
          seen.push({ ip: request.ip, route: request.routeOptions?.url });
          return authorize(token);
        },
      },
    );
    expect(fastPathLine).toContain('POSTs take the Nest route, the auth authorizer takes the request');
    expect((await post(url, initializeRequest())).status).toBe(200);
    expect(seen).toEqual([{ ip: '127.0.0.1', route: '/mcp' }]);
  });

  it('stays on the Nest route for a hook of the request lifecycle, which then sees every POST', async () => {
    const { url, fastPathLine } = await boot((app) => {
      app
        .getHttpAdapter()
        .getInstance()
        .addHook('onRequest', function tagging(_request, reply, done) {
          reply.raw.setHeader('X-Host-Hook', 'seen');
          done();
        });
    });
    expect(fastPathLine).toContain('POSTs take the Nest route, seen by the onRequest hook tagging');
    const reply = await post(url, initializeRequest());
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-host-hook')).toBe('seen');
  });

  it("stays on the Nest route for the app's CORS, Nest middleware and global interceptor, which then see every POST", async () => {
    const cors = await boot(
      (app) => app.enableCors({ origin: 'https://app.example' }),
      {},
      {
        allowedOrigins: ['https://app.example'],
      },
    );
    expect(cors.fastPathLine).toContain("POSTs take the Nest route, seen by the app's CORS (enableCors)");
    const allowed = await post(cors.url, initializeRequest(), { headers: { Origin: 'https://app.example' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');

    const middleware = await boot(undefined, { imports: [CountingMiddlewareModule] });
    expect(middleware.fastPathLine).toContain('POSTs take the Nest route, seen by Nest middleware (@fastify/middie)');
    expect((await echo(middleware.url)).status).toBe(200);
    expect(hostSaw.middleware).toBe(3);

    const intercepted = await boot(undefined, {
      providers: [{ provide: APP_INTERCEPTOR, useClass: CountingInterceptor }],
    });
    expect(intercepted.fastPathLine).toContain("seen by the app's global interceptor CountingInterceptor");
    expect((await echo(intercepted.url)).status).toBe(200);
    expect(hostSaw.interceptor).toBe(3);
  });

  it("hands the POSTs to Fastify while someone traces Fastify's request handlers", async () => {
    const { url, fastPathLine } = await boot();
    expect(fastPathLine).toContain('served ahead of');
    const traced: string[] = [];
    const channel = tracingChannel<unknown, { request?: { url?: string } }>('fastify.request.handler');
    const handlers = {
      start: (message: { request?: { url?: string } }) => void traced.push(message.request?.url ?? '?'),
      end: () => undefined,
      asyncStart: () => undefined,
      asyncEnd: () => undefined,
      error: () => undefined,
    };
    channel.subscribe(handlers);
    try {
      expect((await post(url, initializeRequest())).status).toBe(200);
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(traced).toEqual(['/mcp']);
    // Without a subscriber, the POSTs are served ahead of Fastify again.
    expect((await post(url, initializeRequest())).status).toBe(200);
  });
});

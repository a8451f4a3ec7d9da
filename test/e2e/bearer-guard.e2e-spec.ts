import {
  Controller,
  Get,
  Injectable,
  Module,
  Req,
  UseGuards,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Observable } from 'rxjs';
import { McpModule, McpTool, type McpAuthResult, type McpToolContext } from '../../src/mcp';
import { callRequest, initializeRequest, openSession, post } from '../support/mcp-wire';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { mcpStrategyName } from '../../src/mcp/server/auth/mcp-bearer.strategy';

/** The authorizer of the suite: one known token, one that makes it fail as a broken backend would. */
function authSync(token: string): McpAuthResult | null {
  if (token === 'token-boom') throw new Error('the token service is down');
  return token === 'token-alice' ? { key: 'alice', label: 'Alice' } : null;
}

/**
 * The same answers, asynchronously. The guard lets a synchronous authorizer's request through
 * without a promise and awaits an asynchronous one: both run every case below.
 */
const AUTHORIZERS = {
  async: async (token: string): Promise<McpAuthResult | null> => authSync(token),
  sync: authSync,
};

/** What the host's own interceptor saw on the request after the mount's guard ran. */
const seen: { user?: unknown; hasAuthInfo?: boolean }[] = [];

/** An app-wide interceptor of the host: it reads what the guard left on the request, as Passport's users do. */
@Injectable()
class RequestUserProbe implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<{ user?: unknown; authInfo?: unknown }>();
    seen.push({ user: req.user, hasAuthInfo: 'authInfo' in req });
    return next.handle();
  }
}

@Injectable()
class WhoAmITools {
  calls = 0;

  @McpTool({ description: 'Says who called' })
  whoami(_args: unknown, ctx: McpToolContext) {
    this.calls++;
    return `${ctx.principal.key} (${ctx.principal.label})`;
  }
}

/** A route of the host behind Passport's own guard running the mount's strategy (which stays registered with Passport). */
@Controller('me')
@UseGuards(AuthGuard(mcpStrategyName('default')))
class MeController {
  @Get()
  me(@Req() req: { user: { key: string } }) {
    return { key: req.user.key };
  }
}

@Module({ controllers: [MeController] })
class MeModule {}

const CASES = HTTP_ADAPTERS.flatMap((adapter) => (['async', 'sync'] as const).map((kind) => [adapter, kind] as const));

describe.each(CASES)('the mount bearer guard on %s, %s authorizer (real app, PostgreSQL)', (adapter, kind) => {
  const auth = AUTHORIZERS[kind];
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [McpModule.forRoot({ auth, providers: [WhoAmITools] }), MeModule],
        providers: [WhoAmITools, { provide: APP_INTERCEPTOR, useClass: RequestUserProbe }],
      },
      adapter,
    );
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('hands the authorizer principal to the tool and leaves it on req.user for the host', async () => {
    seen.length = 0;
    const { sessionId } = await openSession(url, 'token-alice');
    const reply = await post(url, callRequest(7, 'whoami'), { token: 'token-alice', sessionId });
    expect(reply.status).toBe(200);
    expect(reply.json.result.content[0].text).toBe('alice (Alice)');
    expect(seen.at(-1)).toEqual({ user: expect.objectContaining({ key: 'alice', label: 'Alice' }), hasAuthInfo: true });
  });

  it('answers a failing authorizer with a server error, not a 401, and runs nothing', async () => {
    const tools = server.app.get(WhoAmITools);
    const before = tools.calls;
    const reply = await post(url, initializeRequest(), { token: 'token-boom' });
    expect(reply.status).toBe(500);
    expect(reply.headers.get('www-authenticate')).toBeNull();
    expect(reply.text).not.toContain('token-boom');
    expect(tools.calls).toBe(before);
    // The next caller is served as usual.
    const { sessionId } = await openSession(url, 'token-alice');
    expect(sessionId).toBeTruthy();
  });

  it("still runs through Passport: a host route behind AuthGuard of the mount's strategy", async () => {
    const me = await fetch(`${server.baseUrl}/me`, { headers: { Authorization: 'Bearer token-alice' } });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ key: 'alice' });
    const refused = await fetch(`${server.baseUrl}/me`, { headers: { Authorization: 'Bearer token-mallory' } });
    expect(refused.status).toBe(401);
  });

  it('refuses an unknown token and a missing one with 401 Bearer (no oauth option: no error code)', async () => {
    const rejected = await post(url, initializeRequest(), { token: 'token-mallory' });
    expect(rejected.status).toBe(401);
    expect(rejected.headers.get('www-authenticate')).toBe('Bearer');
    const missing = await post(url, initializeRequest(), { token: null });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
  });
});

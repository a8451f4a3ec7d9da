import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_PAGE_SIZE, DEFAULT_SESSION_IDLE_TTL_MS } from '../../mcp.constants';
import { McpModule } from '../../mcp.module';
import { resolveMcpOptions } from './mcp.options';
import { MCP_ENTITIES } from '../../persistence/entities';
import type { McpModuleForRootOptions, McpModuleOptions } from '../interfaces/mcp-module-options.interface';

const extras = { mount: 'main', path: '/mcp' };
const auth = () => 'alice';

function failure(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to throw');
}

describe('resolveMcpOptions', () => {
  it('refuses an option key a mount does not read, naming the closest known one', () => {
    const error = failure(() => resolveMcpOptions({ auth, maxBody: 10 } as McpModuleOptions, extras));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toMatch(
      /^McpModule \(mount "main"\): unknown option "maxBody" \(did you mean "advanced.maxBodyBytes"\? known: auth, anonymous, server, providers, /,
    );
  });

  it('applies the documented defaults', () => {
    const resolved = resolveMcpOptions({ auth }, extras);
    expect(resolved).toMatchObject({ auth, mount: 'main', path: '/mcp' });
    expect(resolved.maxBodyBytes).toBe(4 * 1024 * 1024);
    expect(resolved.maxBodyBytes).toBe(DEFAULT_MAX_BODY_BYTES);
    expect(resolved.pageSize).toBe(DEFAULT_PAGE_SIZE);
    expect(resolved.pageSize).toBe(100);
    expect(resolved.sessions).toEqual({
      idleTtlMs: DEFAULT_SESSION_IDLE_TTL_MS,
      cache: { ttlMs: 1000, maxEntries: 10_000 },
    });
    expect(resolved.sessions.idleTtlMs).toBe(3_600_000);
  });

  it('keeps values the user set', () => {
    class Tools {}
    const resolved = resolveMcpOptions(
      {
        auth,
        advanced: { maxBodyBytes: 1024, pageSize: 2 },
        sessions: { idleTtlMs: 5000 },
        providers: [Tools],
        allowedOrigins: '*',
        server: { name: 's', version: '9' },
      },
      extras,
    );
    expect(resolved).toMatchObject({
      maxBodyBytes: 1024,
      pageSize: 2,
      sessions: { idleTtlMs: 5000 },
      providers: [Tools],
      allowedOrigins: '*',
      server: { name: 's', version: '9' },
    });
  });

  it('admits anonymous callers only when anonymous is true, and refuses anything but a boolean', () => {
    expect(resolveMcpOptions({ auth }, extras).anonymous).toBe(false);
    expect(resolveMcpOptions({ auth, anonymous: true }, extras).anonymous).toBe(true);
    const error = failure(() => resolveMcpOptions({ auth, anonymous: 'yes' } as unknown as McpModuleOptions, extras));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toBe('McpModule (mount "main"): option "anonymous" must be true or false.');
  });

  it('accepts an authorizer class (a function) as auth', () => {
    class Authorizer {
      authorize() {
        return 'bob';
      }
    }
    expect(resolveMcpOptions({ auth: Authorizer }, extras).auth).toBe(Authorizer);
  });

  it.each([
    ['no options at all', undefined],
    ['options without auth', {}],
    ['auth: undefined', { auth: undefined }],
    ['auth: null', { auth: null }],
  ])('fails closed with %s, telling how to fix it', (_label, options) => {
    const error = failure(() => resolveMcpOptions(options as unknown as McpModuleOptions, extras));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.name).toBe('McpConfigurationError');
    expect(error.message).toContain('mount "main"');
    expect(error.message).toContain('"auth"');
    expect(error.message).toContain('auth: (token, request) => principal | null');
    expect(error.message).toContain('McpModule.forRoot');
  });

  it.each([
    ['a string', 'secret-token'],
    ['an object', { authorize: () => 'x' }],
    ['true', true],
  ])('rejects auth that is %s, saying it must be a function or an authorizer class', (_label, value) => {
    const error = failure(() => resolveMcpOptions({ auth: value } as unknown as McpModuleOptions, extras));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('"auth" must be a function');
    expect(error.message).toContain('authorize(token, request)');
  });

  // The options reference's table, as numbers: a change of a default constant must fail here.
  it('applies the documented defaults of the database bound, the streams and the caps', () => {
    const resolved = resolveMcpOptions({ auth }, extras);
    expect(resolved.database).toEqual({ timeoutMs: 5_000 });
    expect(resolved.streams).toEqual({
      clientRequestTimeoutMs: 300_000,
      keepAliveMs: 15_000,
      retryMs: 1_000,
      maxBufferedBytes: 4 * 1024 * 1024,
      resumeEvents: 500,
      resumeTtlMs: 600_000,
      resumeFollowers: 1000,
    });
    expect(resolved.limits).toEqual({
      sessionsPerPrincipal: 100,
      streamsPerPrincipal: 100,
      listenStreamsPerPrincipal: 100,
      subscriptionsPerSession: 1000,
      listenResourceSubscriptions: 1000,
      listenTaskIds: 1000,
      tasksPerPrincipal: 100,
    });
  });

  it('defaults bodyTimeoutMs to 30 s and keeps a given one', () => {
    expect(resolveMcpOptions({ auth }, extras).bodyTimeoutMs).toBe(30_000);
    expect(resolveMcpOptions({ auth, advanced: { bodyTimeoutMs: 500 } }, extras).bodyTimeoutMs).toBe(500);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects bodyTimeoutMs %p, naming the option', (value) => {
    const error = failure(() => resolveMcpOptions({ auth, advanced: { bodyTimeoutMs: value } }, extras));
    expect(error.message).toContain('"advanced.bodyTimeoutMs"');
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1024'])(
    'rejects maxBodyBytes %p, naming the option',
    (value) => {
      const error = failure(() => resolveMcpOptions({ auth, advanced: { maxBodyBytes: value as number } }, extras));
      expect(error).toBeInstanceOf(McpConfigurationError);
      expect(error.message).toContain('"advanced.maxBodyBytes"');
      expect(error.message).toContain('a positive integer');
    },
  );

  it("defaults audit.commit to 'sync' and keeps 'async'", () => {
    expect(resolveMcpOptions({ auth }, extras).audit).toEqual({ commit: 'sync' });
    expect(resolveMcpOptions({ auth, advanced: { audit: {} } }, extras).audit).toEqual({ commit: 'sync' });
    expect(resolveMcpOptions({ auth, advanced: { audit: { commit: 'async' } } }, extras).audit).toEqual({
      commit: 'async',
    });
  });

  it('rejects a bad audit option, naming it and what it must be', () => {
    expect(
      failure(() => resolveMcpOptions({ auth, advanced: { audit: { commit: 'later' as 'sync' } } }, extras)).message,
    ).toBe(`McpModule (mount "main"): option "advanced.audit.commit" must be 'sync' or 'async'.`);
    expect(failure(() => resolveMcpOptions({ auth, advanced: { audit: 'async' as never } }, extras)).message).toContain(
      '"advanced.audit" must be an object',
    );
    expect(
      failure(() => resolveMcpOptions({ auth, advanced: { audit: { comit: 'async' } as never } }, extras)).message,
    ).toContain('unknown option "comit" (did you mean "commit"?');
  });

  it('defaults limits.tasksPerPrincipal to 100, keeps a given one and rejects one that is not a positive integer', () => {
    expect(resolveMcpOptions({ auth }, extras).limits.tasksPerPrincipal).toBe(100);
    expect(resolveMcpOptions({ auth, advanced: { limits: { tasksPerPrincipal: 3 } } }, extras).limits).toMatchObject({
      tasksPerPrincipal: 3,
      sessionsPerPrincipal: 100,
    });
    for (const value of [0, -1, 1.5]) {
      expect(
        failure(() => resolveMcpOptions({ auth, advanced: { limits: { tasksPerPrincipal: value } } }, extras)).message,
      ).toBe('McpModule (mount "main"): option "advanced.limits.tasksPerPrincipal" must be a positive integer.');
    }
  });

  it("keeps the mount's rateLimit (none by default) and refuses one that is not a budget of calls", () => {
    expect(resolveMcpOptions({ auth }, extras).rateLimit).toBeNull();
    expect(resolveMcpOptions({ auth, rateLimit: { limit: 100, windowMs: 60_000 } }, extras).rateLimit).toEqual({
      limit: 100,
      windowMs: 60_000,
      per: 'principal',
    });
    for (const value of [
      { limit: 0, windowMs: 1000 },
      { limit: 5 },
      { limit: 5, windowMs: 1.5 },
      5,
      { limit: 5, windowMs: 1000, per: 'mount' },
    ]) {
      expect(
        failure(() => resolveMcpOptions({ auth, rateLimit: value as McpModuleOptions.RateLimit }, extras)).message,
      ).toBe(
        `McpModule (mount "main") option "rateLimit": rateLimit must be { limit: <calls, a positive integer>, windowMs: <a positive integer> }, got ${JSON.stringify(value)}; e.g. rateLimit: { limit: 10, windowMs: 60_000 }.`,
      );
    }
  });

  it('rejects a bad pageSize and a bad sessions.idleTtlMs, naming the option', () => {
    expect(failure(() => resolveMcpOptions({ auth, advanced: { pageSize: 0 } }, extras)).message).toContain(
      '"advanced.pageSize"',
    );
    expect(failure(() => resolveMcpOptions({ auth, sessions: { idleTtlMs: -5 } }, extras)).message).toContain(
      '"sessions.idleTtlMs"',
    );
  });

  it('turns the session cache on by default, off with false, and fills in a partial one', () => {
    expect(resolveMcpOptions({ auth, sessions: { cache: true } }, extras).sessions.cache).toEqual({
      ttlMs: 1000,
      maxEntries: 10_000,
    });
    expect(resolveMcpOptions({ auth, sessions: { cache: false } }, extras).sessions.cache).toBe(false);
    expect(resolveMcpOptions({ auth, sessions: { cache: { ttlMs: 250 } } }, extras).sessions).toEqual({
      idleTtlMs: 3_600_000,
      cache: { ttlMs: 250, maxEntries: 10_000 },
    });
    expect(
      resolveMcpOptions({ auth, sessions: { idleTtlMs: 5000, cache: { maxEntries: 3 } } }, extras).sessions,
    ).toEqual({ idleTtlMs: 5000, cache: { ttlMs: 1000, maxEntries: 3 } });
  });

  it.each([
    [{ cache: { ttlMs: 0 } }, 'option "sessions.cache.ttlMs" must be a positive integer'],
    [{ cache: { ttlMs: 1.5 } }, 'option "sessions.cache.ttlMs" must be a positive integer'],
    [{ cache: { maxEntries: -1 } }, 'option "sessions.cache.maxEntries" must be a positive integer'],
    [{ cache: 'yes' }, 'option "sessions.cache" must be true, false or { ttlMs?, maxEntries? }'],
    [{ cache: 1000 }, 'option "sessions.cache" must be true, false or { ttlMs?, maxEntries? }'],
    [
      { cache: { ttl: 1000 } },
      'option "sessions.cache": unknown option "ttl" (did you mean "ttlMs"? known: ttlMs, maxEntries)',
    ],
    [
      { idleTtl: 1000 },
      'option "sessions": unknown option "idleTtl" (did you mean "idleTtlMs"? known: idleTtlMs, cache)',
    ],
  ])('refuses sessions %j with a message naming the option', (sessions, message) => {
    const error = failure(() => resolveMcpOptions({ auth, sessions } as unknown as McpModuleOptions, extras));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain(message);
  });
});

describe('McpModule boot without auth', () => {
  it('fails to start the app with the message that says how to configure auth', async () => {
    // A real (in-memory SQLite) connection, so that auth is the only thing missing.
    const database = TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    const boot = async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [database, McpModule.forRoot({} as McpModuleForRootOptions)],
      }).compile();
      try {
        await moduleRef.init();
      } finally {
        await moduleRef.close();
      }
    };
    const error = await boot().then(
      () => {
        throw new Error('the app booted without auth');
      },
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('has no "auth" option');
    expect(error.message).toContain('mount "default"');
    expect(error.message).toContain('McpModule.forRoot');
  });

  it('boots with the same setup once auth is given (so auth is what was missing)', async () => {
    const database = TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    const moduleRef = await Test.createTestingModule({ imports: [database, McpModule.forRoot({ auth })] }).compile();
    await moduleRef.init();
    await moduleRef.close();
  });
});

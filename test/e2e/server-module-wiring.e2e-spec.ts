import { Global, Injectable, Module, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { UnknownDependenciesException } from '@nestjs/core/errors/exceptions/unknown-dependencies.exception';
import { Test, type TestingModule } from '@nestjs/testing';
import { McpModule, type McpAuthorizer, type McpModuleOptions } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { createInMemoryMcpStores, type InMemoryMcpStores } from '../../src/mcp/testing';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { initializeRequest, post } from '../support/mcp-wire';
import { InjectMcpToolset, type McpMessageHandler } from '../../src/mcp/transports';

/** A running app on in-memory stores (no database needed for what these tests check). */
interface BootedApp {
  app: INestApplication;
  baseUrl: string;
}

const apps: INestApplication[] = [];
const moduleRefs: TestingModule[] = [];

async function boot(metadata: ModuleMetadata): Promise<BootedApp> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${port}` };
}

/** A provider of another module that injects a mount's toolset. */
@Injectable()
class ToolsetConsumer {
  constructor(@InjectMcpToolset('shared') readonly toolset: McpMessageHandler) {}
}

/** A module that does not import McpModule. */
@Module({ providers: [ToolsetConsumer], exports: [ToolsetConsumer] })
class ConsumerModule {}

/** Options from a class (`useClass`): the module instantiates it. */
@Injectable()
class OptionsFromClass {
  createMcpOptions(): McpModuleOptions {
    return { auth: fixtureAuth, server: { name: 'from-use-class', version: '1.2.3' } };
  }
}

/** Options from an existing provider (`useExisting`), exported by its own module. */
@Injectable()
class SharedMcpOptions {
  static instances = 0;
  constructor() {
    SharedMcpOptions.instances += 1;
  }
  createMcpOptions(): McpModuleOptions {
    return { auth: fixtureAuth, server: { name: 'from-use-existing', version: '4.5.6' } };
  }
}

@Module({ providers: [SharedMcpOptions], exports: [SharedMcpOptions] })
class SharedOptionsModule {}

/** A dependency of the authorizer, provided by a global module of the host. */
@Injectable()
class TokenTable {
  readonly tokens: Record<string, string> = { 'token-carol': 'carol' };
}

@Global()
@Module({ providers: [TokenTable], exports: [TokenTable] })
class TokenTableModule {}

/** An authorizer class that is not registered as a provider; async, with an injected dependency. */
@Injectable()
class TableAuthorizer implements McpAuthorizer {
  static instances = 0;
  constructor(private readonly table: TokenTable) {
    TableAuthorizer.instances += 1;
  }
  async authorize(token: string) {
    await new Promise((resolve) => setImmediate(resolve));
    const key = this.table.tokens[token];
    return key ? { key, label: `${key} (from the table)` } : null;
  }
}

/**
 * The module-level options that shape how a mount is built: `isGlobal`, `forRootAsync` with
 * `useClass` / `useExisting`, authorizers (a class built by the module, async functions) and the
 * request-state secret check at boot.
 */
describe('McpModule wiring options', () => {
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    await Promise.all(moduleRefs.map((ref) => ref.close().catch(() => undefined)));
  });

  describe('isGlobal', () => {
    it('with isGlobal: true, a module that does not import the mount injects its toolset and delivers a message', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          McpModule.forRoot({
            mount: 'shared',
            path: '/shared',
            isGlobal: true,
            auth: fixtureAuth,
            providers: [FixtureTools],
            stores: createInMemoryMcpStores({ mount: 'shared' }),
          }),
          ConsumerModule,
        ],
        providers: [FixtureTools],
      }).compile();
      moduleRefs.push(moduleRef);
      await moduleRef.init();
      const consumer = moduleRef.get(ToolsetConsumer);
      const response = await consumer.toolset.deliver(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'in process' } } },
        { principal: { key: 'alice', label: 'alice', raw: 'alice' }, sessionId: null, protocolVersion: '2025-11-25' },
      );
      expect(response).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'in process' }] } });
    });

    it('without isGlobal (the default), the same module cannot resolve the toolset: the app does not compile', async () => {
      const compiling = Test.createTestingModule({
        imports: [
          McpModule.forRoot({
            mount: 'shared',
            path: '/shared',
            auth: fixtureAuth,
            providers: [FixtureTools],
            stores: createInMemoryMcpStores({ mount: 'shared' }),
          }),
          ConsumerModule,
        ],
        providers: [FixtureTools],
      }).compile();
      await expect(compiling).rejects.toBeInstanceOf(UnknownDependenciesException);
    });
  });

  describe('forRootAsync', () => {
    it('useClass: the module builds the options class and serves with its options', async () => {
      const { baseUrl } = await boot({
        imports: [McpModule.forRootAsync({ useClass: OptionsFromClass, stores: createInMemoryMcpStores() })],
        providers: [FixtureTools],
      });
      const reply = await post(`${baseUrl}/mcp`, initializeRequest());
      expect(reply.status).toBe(200);
      expect(reply.json.result.serverInfo).toEqual({ name: 'from-use-class', version: '1.2.3' });
      expect((await post(`${baseUrl}/mcp`, initializeRequest(), { token: 'not-a-token' })).status).toBe(401);
    });

    it("useExisting: the options come from the imported module's own instance", async () => {
      SharedMcpOptions.instances = 0;
      const { app, baseUrl } = await boot({
        imports: [
          SharedOptionsModule,
          McpModule.forRootAsync({
            imports: [SharedOptionsModule],
            useExisting: SharedMcpOptions,
            mount: 'existing',
            path: '/existing',
            stores: createInMemoryMcpStores({ mount: 'existing' }),
          }),
        ],
        providers: [FixtureTools],
      });
      const reply = await post(`${baseUrl}/existing`, initializeRequest());
      expect(reply.status).toBe(200);
      expect(reply.json.result.serverInfo).toEqual({ name: 'from-use-existing', version: '4.5.6' });
      expect(SharedMcpOptions.instances).toBe(1);
      expect(app.get(SharedMcpOptions)).toBeInstanceOf(SharedMcpOptions);
    });
  });

  describe('authorizers', () => {
    let stores: InMemoryMcpStores;
    let baseUrl: string;

    beforeAll(async () => {
      TableAuthorizer.instances = 0;
      stores = createInMemoryMcpStores();
      ({ baseUrl } = await boot({
        imports: [
          TokenTableModule,
          McpModule.forRoot({ auth: TableAuthorizer, providers: [FixtureTools], stores }),
          McpModule.forRoot({
            mount: 'async-fn',
            path: '/async-fn',
            providers: [FixtureTools],
            stores: createInMemoryMcpStores({ mount: 'async-fn' }),
            auth: async (token: string) => {
              await new Promise((resolve) => setImmediate(resolve));
              return token === 'token-dave' ? { key: 'dave', label: 'Dave' } : null;
            },
          }),
        ],
        providers: [FixtureTools],
      }));
    });

    it('a class not registered as a provider is built by the module with its dependencies injected, and may answer with a Promise', async () => {
      const accepted = await post(`${baseUrl}/mcp`, initializeRequest(), { token: 'token-carol' });
      expect(accepted.status).toBe(200);
      const sessionId = accepted.headers.get('mcp-session-id');
      expect(stores.sessions.sessions.find((session) => session.sessionId === sessionId)).toMatchObject({
        principalKey: 'carol',
        principalLabel: 'carol (from the table)',
      });
      const refused = await post(`${baseUrl}/mcp`, initializeRequest(), { token: 'token-alice' });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(refused.text).toBe('');
      expect(TableAuthorizer.instances).toBe(1);
    });

    it('an async authorizer function: its resolved principal is used, a resolved null is a 401', async () => {
      const accepted = await post(`${baseUrl}/async-fn`, initializeRequest(), { token: 'token-dave' });
      expect(accepted.status).toBe(200);
      const whoami = await post(
        `${baseUrl}/async-fn`,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        {
          token: 'token-dave',
          sessionId: accepted.headers.get('mcp-session-id')!,
          headers: { 'MCP-Protocol-Version': '2025-11-25' },
        },
      );
      expect(whoami.json.result.structuredContent).toEqual({ principal: 'dave' });
      const refused = await post(`${baseUrl}/async-fn`, initializeRequest(), { token: 'token-carol' });
      expect(refused.status).toBe(401);
    });
  });

  describe('stateless.requestStateSecret', () => {
    it.each([
      ['a 15-character string', 'fifteen-chars!!'],
      ['a 15-byte Buffer', Buffer.alloc(15, 7)],
    ])('%s is refused at boot with McpConfigurationError', async (_case, secret) => {
      const compiling = Test.createTestingModule({
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            stateless: { requestStateSecret: secret },
            stores: createInMemoryMcpStores(),
          }),
        ],
        providers: [FixtureTools],
      }).compile();
      await expect(compiling).rejects.toBeInstanceOf(McpConfigurationError);
      await expect(compiling).rejects.toThrow(/at least 16 bytes/);
    });

    it('a 16-byte secret boots', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            stateless: { requestStateSecret: 'sixteen-chars!!!' },
            stores: createInMemoryMcpStores(),
          }),
        ],
        providers: [FixtureTools],
      }).compile();
      moduleRefs.push(moduleRef);
      expect(moduleRef.get(FixtureTools)).toBeInstanceOf(FixtureTools);
    });
  });
});

import { Test } from '@nestjs/testing';
import { McpClientModule, McpModule } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { mcpTransports } from '../../src/mcp/transports';
import { createInMemoryMcpStores, InMemoryMcpEventSink, InMemoryMcpOutboundSessionStore } from '../../src/mcp/testing';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { mcpClientStores } from '../../src/mcp/stores';

/** Boots a module with these imports and returns the boot error (the app is closed either way). */
async function bootError(imports: Parameters<typeof Test.createTestingModule>[0]['imports']): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({ imports }).compile();
    await moduleRef.close();
    return null;
  } catch (error) {
    return error;
  }
}

/**
 * A key nothing reads stops the boot, naming the closest known one: a `timeout` written for
 * `timeoutMs` is not ignored. The synchronous extras (isGlobal, transports, stores, mount, path)
 * are taken apart by the module and are no unknown keys.
 */
describe('Unknown option keys at boot', () => {
  const clientStores = () =>
    mcpClientStores({
      outboundSessions: new InMemoryMcpOutboundSessionStore(),
      events: new InMemoryMcpEventSink(),
    });

  it('McpClientModule refuses a server entry with "timeout", suggesting "timeoutMs"', async () => {
    const error = await bootError([
      McpClientModule.forRoot({
        servers: { x: { command: ['node', 'server.js'], timeout: 3000 } as never },
        stores: clientStores(),
      }),
    ]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toMatch(
      /^MCP server "x": unknown option "timeout" \(did you mean "timeoutMs"\? known: .*timeoutMs.*command, args, env, cwd, stateless, pool, closeGraceMs, killGraceMs\)$/,
    );
  });

  it('McpClientModule.forRootAsync refuses an unknown key of what its factory returns', async () => {
    const error = await bootError([
      McpClientModule.forRootAsync({ useFactory: () => ({ defaultTimeout: 5 }) as never, stores: clientStores() }),
    ]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toContain(
      'McpClientModule: unknown option "defaultTimeout" (did you mean "defaultTimeoutMs"?',
    );
  });

  it('McpClientModule.forRoot refuses a transports array (written without mcpTransports), saying how to build it', async () => {
    const factory = { transport: 'websocket', create: () => ({ deliver: () => Promise.reject(new Error('unused')) }) };
    // Refused by forRoot itself, before Nest builds anything.
    let error: unknown;
    try {
      McpClientModule.forRoot({ servers: {}, transports: [factory] as never, stores: clientStores() });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toBe(
      'McpClientModule: "transports" must be built with mcpTransports(...) from durable-mcp/transports, e.g. transports: mcpTransports(MyTransportFactory)',
    );
  });

  it('McpModule refuses an unknown key of a mount', async () => {
    const error = await bootError([
      McpModule.forRoot({ auth: fixtureAuth, pagesize: 10, stores: createInMemoryMcpStores() } as never),
    ]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toContain(
      'McpModule (mount "default"): unknown option "pagesize" (did you mean "advanced.pageSize"?',
    );
  });

  it('boots with every extra and only known keys', async () => {
    const error = await bootError([
      McpModule.forRoot({
        auth: fixtureAuth,
        mount: 'keys',
        path: '/keys',
        isGlobal: false,
        stores: createInMemoryMcpStores(),
        advanced: { pageSize: 10 },
      }),
      McpClientModule.forRoot({
        isGlobal: true,
        transports: mcpTransports(),
        stores: clientStores(),
        defaultTimeoutMs: 5_000,
        queue: { attempts: 2 },
        servers: {
          x: { command: ['node', 'server.js'], timeoutMs: 3_000, stateless: true, pool: { max: 1, idleMs: 1_000 } },
          h: { url: 'http://127.0.0.1:9/mcp', maxResponseBytes: 1024 },
        },
      }),
    ]);
    expect(error).toBeNull();
  });
});

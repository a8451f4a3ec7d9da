import 'reflect-metadata';
import { Injectable, Scope, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { McpModuleOptions } from './interfaces/mcp-module-options.interface';
import type { McpToolContext } from '../interfaces/mcp-tool-context.interface';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import { resolveMcpOptions } from './config/mcp.options';
import { MCP_ENTITIES } from '../persistence/entities';
import { MCP_COLUMN_LENGTHS } from '../persistence/mcp-columns.constants';
import type { JsonRpcResponse } from '../protocol/jsonrpc';
import { methodFacts } from '../protocol/method-catalog';
import { McpPrompt } from './decorators/mcp-prompt.decorator';
import { McpResource } from './decorators/mcp-resource.decorator';
import { McpResourceTemplate } from './decorators/mcp-resource-template.decorator';
import { FeaturesExplorer } from './features.explorer';
import { createMcpFeatureProviders } from './feature.providers';
import { McpResourceNotifier } from './features/mcp-resource-notifier';
import { McpMetadataAccessor } from './decorators/mcp-metadata.accessor';
import type { McpSessionStore } from '../persistence/interfaces/mcp-session-store.interface';
import { MCP_SESSION_STORE, MCP_STORE_SETTINGS } from '../persistence/mcp-persistence.constants';
import { createMcpServerStoreProviders } from '../persistence/store-providers';
import { Toolset } from './dispatch/toolset';
import { McpPendingClientRequests } from './sessions/mcp-session-channel-pending';
import { McpStreamRegistry } from './sessions/mcp-stream-registry';
import { mcpEventLogProvider, mcpPubSubProvider } from './pubsub/mcp-pubsub.providers';
import { McpSessionBus } from './sessions/mcp-session-bus';
import { McpMountBus } from './pubsub/mount-bus';
import { McpCachedSessionStore } from './sessions/mcp-cached-session.store';

const principal = { key: 'alice', label: 'Alice', raw: 'alice' };

/** Boots a Nest context on in-memory SQLite with the feature providers and `providers`; discovery runs on init. */
async function boot(
  providers: Provider[],
  options: Partial<McpModuleOptions> = {},
): Promise<{ toolset: Toolset; moduleRef: TestingModule }> {
  const toolset = new Toolset('test', { name: 'features-spec', version: '1.0.0' }, 100);
  const moduleRef = await Test.createTestingModule({
    imports: [
      DiscoveryModule,
      TypeOrmModule.forRoot({
        type: 'better-sqlite3',
        database: ':memory:',
        entities: MCP_ENTITIES,
        synchronize: true,
      }),
      TypeOrmModule.forFeature(MCP_ENTITIES),
    ],
    providers: [
      ...providers,
      ...createMcpFeatureProviders('test'),
      FeaturesExplorer,
      McpMetadataAccessor,
      ...createMcpServerStoreProviders().providers,
      // logging/setLevel goes through the mount's session cache, which listens on the session bus.
      McpCachedSessionStore,
      McpSessionBus,
      McpMountBus,
      mcpPubSubProvider,
      mcpEventLogProvider,
      McpPendingClientRequests,
      McpStreamRegistry,
      { provide: MCP_STORE_SETTINGS, useValue: { mount: 'test', idleTtlMs: 3_600_000 } },
      { provide: Toolset, useValue: toolset },
      {
        provide: MCP_MODULE_OPTIONS,
        useValue: resolveMcpOptions({ auth: () => 'alice', ...options }, { mount: 'test', path: '/mcp' }),
      },
    ],
  }).compile();
  await moduleRef.init();
  return { toolset, moduleRef };
}

async function bootError(providers: Provider[]): Promise<Error> {
  try {
    await (await boot(providers)).moduleRef.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the app to fail at init');
}

let nextId = 1;
async function request(
  toolset: Toolset,
  method: string,
  params: Record<string, unknown>,
  sessionId: string | null = null,
) {
  return (await toolset.deliver(
    { jsonrpc: '2.0', id: nextId++, method, params },
    { principal, sessionId, protocolVersion: '2025-11-25' },
  )) as JsonRpcResponse;
}

@Injectable()
class Docs {
  @McpResource({ uri: 'docs://a' })
  a() {
    return 'A';
  }
}

@Injectable()
class SameUri {
  @McpResource({ uri: 'docs://a' })
  again() {
    return 'again';
  }
}

@Injectable({ scope: Scope.REQUEST })
class ScopedPrompts {
  private static instances = 0;
  private readonly instance = ++ScopedPrompts.instances;

  @McpPrompt({ arguments: [{ name: 'who', required: true }], complete: { who: 'suggest' } })
  greet({ who }: { who: string }, ctx: McpToolContext) {
    return `hello ${who} from instance ${this.instance} for ${ctx.principal.key}`;
  }

  suggest(value: string) {
    return ['ann', 'bob'].filter((name) => name.startsWith(value)).map((name) => `${name}#${this.instance}`);
  }
}

describe('FeaturesExplorer', () => {
  it('announces only logging when no resource, prompt or completer exists, and leaves their methods unknown', async () => {
    const { toolset, moduleRef } = await boot([]);
    expect(toolset.getCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
    expect(await request(toolset, 'resources/list', {})).toMatchObject({ error: { code: -32601 } });
    expect(await request(toolset, 'prompts/list', {})).toMatchObject({ error: { code: -32601 } });
    expect(await request(toolset, 'completion/complete', {})).toMatchObject({ error: { code: -32601 } });
    await moduleRef.close();
  });

  it('serves only catalogued client requests, each with the server capability the catalog says it needs', async () => {
    const handle = jest.spyOn(Toolset.prototype, 'handle');
    try {
      const { toolset, moduleRef } = await boot([Docs, ScopedPrompts]);
      const served = handle.mock.calls.map(([method]) => method);
      expect(served.sort()).toEqual(
        [
          'completion/complete',
          'logging/setLevel',
          'prompts/get',
          'prompts/list',
          'resources/list',
          'resources/read',
          'resources/subscribe',
          'resources/templates/list',
          'resources/unsubscribe',
        ].sort(),
      );
      const capabilities = toolset.getCapabilities() as Record<string, Record<string, unknown>>;
      for (const method of served) {
        const facts = methodFacts(method);
        expect({ method, kind: facts?.kind, senders: facts?.senders }).toEqual({
          method,
          kind: 'request',
          senders: expect.arrayContaining(['client']),
        });
        const requirement = facts?.capability;
        expect({
          method,
          holder: requirement?.holder,
          declared: requirement ? requirement.name in capabilities : false,
        }).toEqual({ method, holder: 'server', declared: true });
        if (requirement?.sub)
          expect({ method, flag: capabilities[requirement.name][requirement.sub] }).toEqual({ method, flag: true });
      }
      await moduleRef.close();
    } finally {
      handle.mockRestore();
    }
  });

  it('fails at boot on two resources with one URI, naming both owners', async () => {
    const error = await bootError([Docs, SameUri]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('Docs#a');
    expect(error.message).toContain('SameUri#again');
  });

  it('fails at boot on an invalid template, a relative URI and a completer for an unknown argument', async () => {
    @Injectable()
    class BadTemplate {
      @McpResourceTemplate({ uriTemplate: 'files:///{+path}' })
      read() {}
    }
    @Injectable()
    class RelativeUri {
      @McpResource({ uri: 'readme.md' })
      read() {}
    }
    @Injectable()
    class TypoCompleter {
      @McpPrompt({ arguments: [{ name: 'language' }], complete: { langauge: () => [] } })
      ask() {}
    }
    expect((await bootError([BadTemplate])).message).toMatch(/BadTemplate#read.*\{\+path\}.*level-1/);
    expect((await bootError([RelativeUri])).message).toMatch(/RelativeUri#read.*not an absolute URI/);
    expect((await bootError([TypoCompleter])).message).toMatch(/TypoCompleter#ask.*"langauge".*language/);
  });

  it('fails at boot on a completer that names a method its provider does not have', async () => {
    @Injectable()
    class MissingCompleter {
      @McpPrompt({ arguments: [{ name: 'language' }], complete: { language: 'suggestLanguages' } })
      ask() {}
    }
    const error = await bootError([MissingCompleter]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toBe(
      'MissingCompleter#ask: the completer of "language" names the method "suggestLanguages", which its provider does not have. ' +
        'Pass a function (value, context) => string[] or the name of a method of the same provider.',
    );
  });

  it('answers completion/complete with -32602 naming the field when the argument name or value is not a string', async () => {
    @Injectable()
    class Languages {
      @McpPrompt({
        name: 'ask',
        arguments: [{ name: 'language' }],
        complete: { language: (value: string) => ['go', 'rust'].filter((l) => l.startsWith(value)) },
      })
      ask() {
        return 'hi';
      }
    }
    const { toolset, moduleRef } = await boot([Languages]);
    try {
      const ref = { type: 'ref/prompt', name: 'ask' };
      expect(
        await request(toolset, 'completion/complete', { ref, argument: { name: 'language', value: 'r' } }),
      ).toMatchObject({
        result: { completion: { values: ['rust'], total: 1, hasMore: false } },
      });
      for (const [argument, field] of [
        [{ name: 7, value: 'r' }, 'argument.name'],
        [{ name: 'language', value: null }, 'argument.value'],
      ] as const) {
        expect(await request(toolset, 'completion/complete', { ref, argument })).toMatchObject({
          error: { code: -32602, message: `Invalid params: completion/complete needs a string "${field}"` },
        });
      }
    } finally {
      await moduleRef.close();
    }
  });

  it('fails at boot on two prompts of one name or two templates of one template string, naming both owners', async () => {
    @Injectable()
    class GreetA {
      @McpPrompt({ name: 'greet' })
      greet() {}
    }
    @Injectable()
    class GreetB {
      @McpPrompt({ name: 'greet' })
      hello() {}
    }
    @Injectable()
    class FilesA {
      @McpResourceTemplate({ uriTemplate: 'files:///{path}' })
      read() {}
    }
    @Injectable()
    class FilesB {
      @McpResourceTemplate({ uriTemplate: 'files:///{path}' })
      open() {}
    }
    const prompts = await bootError([GreetA, GreetB]);
    expect(prompts).toBeInstanceOf(McpConfigurationError);
    expect(prompts.message).toMatch(
      /^Duplicate MCP prompt "greet" on mount "test": declared by GreetA#greet and by GreetB#hello\./,
    );
    const templates = await bootError([FilesA, FilesB]);
    expect(templates).toBeInstanceOf(McpConfigurationError);
    expect(templates.message).toMatch(
      /^Duplicate MCP resource "files:\/\/\/\{path\}" on mount "test": declared by FilesA#read and by FilesB#open\./,
    );
  });

  it('refuses logging/setLevel without a session, and on the stateless revision where it does not exist', async () => {
    const { toolset, moduleRef } = await boot([]);
    try {
      expect(await request(toolset, 'logging/setLevel', { level: 'debug' }, null)).toMatchObject({
        error: { code: -32600, message: 'logging/setLevel needs an MCP session: the level is stored on it' },
      });
      const stateless = await toolset.deliver(
        { jsonrpc: '2.0', id: nextId++, method: 'logging/setLevel', params: { level: 'debug' } },
        { principal, sessionId: null, protocolVersion: '2026-07-28' },
      );
      expect(stateless).toMatchObject({
        error: { code: -32601, message: 'Method not found: logging/setLevel (2026-07-28 carries the level in _meta)' },
      });
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses resources/subscribe on 2026-07-28, and a URI longer than its column, before touching the store', async () => {
    const { toolset, moduleRef } = await boot([Docs]);
    try {
      const stateless = await toolset.deliver(
        { jsonrpc: '2.0', id: nextId++, method: 'resources/subscribe', params: { uri: 'docs://a' } },
        { principal, sessionId: null, protocolVersion: '2026-07-28' },
      );
      expect(stateless).toMatchObject({
        error: {
          code: -32601,
          message: 'Method not found: resources/subscribe (2026-07-28 uses subscriptions/listen)',
        },
      });
      const long = `docs://${'a'.repeat(MCP_COLUMN_LENGTHS.subscriptionUri)}`;
      expect(await request(toolset, 'resources/subscribe', { uri: long }, 'session-1')).toMatchObject({
        error: {
          code: -32602,
          message: `Invalid params: "uri" is longer than ${MCP_COLUMN_LENGTHS.subscriptionUri} characters`,
        },
      });
    } finally {
      await moduleRef.close();
    }
  });

  it('resolves request-scoped prompt handlers and method completers per call', async () => {
    const { toolset, moduleRef } = await boot([ScopedPrompts]);
    const first = await request(toolset, 'prompts/get', { name: 'greet', arguments: { who: 'ann' } });
    const second = await request(toolset, 'prompts/get', { name: 'greet', arguments: { who: 'ann' } });
    const textOf = (response: JsonRpcResponse) =>
      'result' in response ? (response.result.messages as any)[0].content.text : response.error.message; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read only by the assertions
    expect(textOf(first)).toMatch(/^hello ann from instance \d+ for alice$/);
    expect(textOf(second)).not.toBe(textOf(first));
    const completion = await request(toolset, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'b' },
    });
    expect(completion).toMatchObject({
      result: { completion: { values: [expect.stringMatching(/^bob#\d+$/)], total: 1, hasMore: false } },
    });
    await moduleRef.close();
  });

  it('keeps subscriptions and the log level on SQLite too', async () => {
    const { toolset, moduleRef } = await boot([Docs]);
    const sessions = moduleRef.get<McpSessionStore>(MCP_SESSION_STORE);
    const session = await sessions.open({
      principal,
      protocolVersion: '2025-11-25',
      clientInfo: null,
      clientCapabilities: null,
    });
    expect(await request(toolset, 'resources/subscribe', { uri: 'docs://a' }, session.sessionId)).toMatchObject({
      result: {},
    });
    expect(await request(toolset, 'resources/subscribe', { uri: 'docs://a' }, session.sessionId)).toMatchObject({
      result: {},
    });
    expect(await request(toolset, 'resources/subscribe', { uri: 'docs://a' }, null)).toMatchObject({
      error: { code: -32600 },
    });
    expect(await moduleRef.get(McpResourceNotifier).subscribers('docs://a')).toEqual([session.sessionId]);
    expect(await request(toolset, 'logging/setLevel', { level: 'warning' }, session.sessionId)).toMatchObject({
      result: {},
    });
    expect((await sessions.find(session.sessionId, principal))?.logLevel).toBe('warning');
    const rows = await moduleRef.get(DataSource).query(`SELECT COUNT(*) AS n FROM mcp_resource_subscriptions`);
    expect(Number(rows[0].n)).toBe(1);
    await moduleRef.close();
  });
});

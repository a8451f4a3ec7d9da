import 'reflect-metadata';
import { Inject, Injectable, Scope, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { McpToolContext } from '../interfaces/mcp-tool-context.interface';
import type { McpModuleOptions } from './interfaces/mcp-module-options.interface';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import { resolveMcpOptions } from './config/mcp.options';
import type { JsonRpcResponse } from '../protocol/jsonrpc';
import { McpTool } from './decorators/mcp-tool.decorator';
import { McpMetadataAccessor } from './decorators/mcp-metadata.accessor';
import { Toolset } from './dispatch/toolset';
import { ToolsetExplorer } from './toolset.explorer';

const principal = { key: 'alice', label: 'Alice', raw: 'alice' };
const context = { principal, sessionId: 's-1', protocolVersion: '2025-11-25' };

/** Boots a real Nest app context with the explorer and the given providers; discovery runs on init. */
async function boot(
  providers: Provider[],
  options: Partial<McpModuleOptions> = {},
): Promise<{ toolset: Toolset; moduleRef: TestingModule }> {
  const toolset = new Toolset('test', { name: 'explorer-spec', version: '1.0.0' }, 100);
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      ...providers,
      ToolsetExplorer,
      McpMetadataAccessor,
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

/** The error app initialization fails with. */
async function bootError(providers: Provider[], options: Partial<McpModuleOptions> = {}): Promise<Error> {
  let booted: TestingModule | undefined;
  try {
    booted = (await boot(providers, options)).moduleRef;
  } catch (error) {
    return error as Error;
  }
  await booted.close();
  throw new Error('expected the app to fail at init');
}

let nextId = 1;
async function call(
  toolset: Toolset,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = (await toolset.deliver(
    { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
    context,
  )) as JsonRpcResponse;
  if (!('result' in response)) throw new Error(`JSON-RPC error: ${JSON.stringify(response.error)}`);
  return response.result;
}

function names(toolset: Toolset): string[] {
  return toolset
    .list()
    .map((tool) => tool.name)
    .sort();
}

class EchoInput {
  @IsString()
  text: string;
}

@Injectable()
class PlainTools {
  @McpTool({ description: 'Echoes text', input: EchoInput })
  echo({ text }: EchoInput) {
    return `echo:${text}`;
  }

  @McpTool({ name: 'custom.name-1', description: 'Has a custom name' })
  renamed() {
    return 'renamed';
  }

  notATool() {
    return 'no';
  }
}

class ValueTools {
  constructor(private readonly greeting: string) {}

  @McpTool({ description: 'Greets from a useValue provider' })
  greet() {
    return this.greeting;
  }
}

class FactoryTools {
  constructor(private readonly source: string) {}

  @McpTool({ description: 'Answers from a useFactory provider' })
  whereFrom() {
    return this.source;
  }
}

@Injectable()
class Config {
  readonly prefix = 'cfg';
}

const REQUEST_SCOPED_COUNTER = { created: 0 };

@Injectable({ scope: Scope.REQUEST })
class RequestScopedTools {
  readonly instanceNumber: number;

  constructor(private readonly config: Config) {
    this.instanceNumber = ++REQUEST_SCOPED_COUNTER.created;
  }

  @McpTool({ description: 'Says which instance served the call' })
  whichInstance(_args: unknown, ctx: McpToolContext) {
    return `${this.config.prefix}:${this.instanceNumber}:${ctx.principal.key}`;
  }
}

describe('ToolsetExplorer', () => {
  const apps: TestingModule[] = [];
  const start = async (providers: Provider[], options: Partial<McpModuleOptions> = {}) => {
    const booted = await boot(providers, options);
    apps.push(booted.moduleRef);
    return booted.toolset;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('finds nothing when the module is only compiled, and the tools once it is initialized', async () => {
    const toolset = new Toolset('test', { name: 'x', version: '1' }, 100);
    const moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        PlainTools,
        ToolsetExplorer,
        McpMetadataAccessor,
        { provide: Toolset, useValue: toolset },
        {
          provide: MCP_MODULE_OPTIONS,
          useValue: resolveMcpOptions({ auth: () => 'a' }, { mount: 'test', path: '/mcp' }),
        },
      ],
    }).compile();
    apps.push(moduleRef);
    expect(toolset.list()).toEqual([]);
    await moduleRef.init();
    expect(names(toolset)).toEqual(['custom.name-1', 'echo']);
  });

  it('serves the @McpTool methods of a class provider, and only those', async () => {
    const toolset = await start([PlainTools]);
    expect(names(toolset)).toEqual(['custom.name-1', 'echo']);
    expect(await call(toolset, 'echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'echo:hi' }] });
    expect(toolset.get('notATool')).toBeUndefined();
  });

  it('names a tool after its method by default, and uses the name given in @McpTool otherwise', async () => {
    const toolset = await start([PlainTools]);
    expect(toolset.get('echo')?.owner).toBe('PlainTools#echo');
    expect(toolset.get('custom.name-1')?.owner).toBe('PlainTools#renamed');
    expect(toolset.get('renamed')).toBeUndefined();
  });

  it('publishes the derived input schema and the description', async () => {
    const toolset = await start([PlainTools]);
    expect(toolset.get('echo')?.definition).toEqual({
      name: 'echo',
      description: 'Echoes text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(toolset.get('custom.name-1')?.definition.inputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
    });
  });

  it('serves the tools of a useValue provider (an instance of a decorated class)', async () => {
    const toolset = await start([{ provide: 'GREETER', useValue: new ValueTools('hello from value') }]);
    expect(names(toolset)).toEqual(['greet']);
    expect(toolset.get('greet')?.owner).toBe('ValueTools#greet');
    expect(await call(toolset, 'greet')).toEqual({ content: [{ type: 'text', text: 'hello from value' }] });
  });

  it('serves the tools of a useFactory provider, with the factory-built instance', async () => {
    const toolset = await start([
      Config,
      {
        provide: 'FACTORY_TOOLS',
        useFactory: (config: Config) => new FactoryTools(`factory+${config.prefix}`),
        inject: [Config],
      },
    ]);
    expect(names(toolset)).toEqual(['whereFrom']);
    expect(toolset.get('whereFrom')?.owner).toBe('FactoryTools#whereFrom');
    expect(await call(toolset, 'whereFrom')).toEqual({ content: [{ type: 'text', text: 'factory+cfg' }] });
  });

  it('serves the tools of a useClass provider registered under a token', async () => {
    const toolset = await start([{ provide: 'PLAIN', useClass: PlainTools }]);
    expect(names(toolset)).toEqual(['custom.name-1', 'echo']);
    expect(toolset.get('echo')?.owner).toBe('PlainTools#echo');
  });

  it('serves a request-scoped provider with a fresh instance for every call', async () => {
    const toolset = await start([Config, RequestScopedTools]);
    expect(names(toolset)).toEqual(['whichInstance']);
    const before = REQUEST_SCOPED_COUNTER.created;
    const first = await call(toolset, 'whichInstance');
    const second = await call(toolset, 'whichInstance');
    expect(first).toEqual({ content: [{ type: 'text', text: `cfg:${before + 1}:alice` }] });
    expect(second).toEqual({ content: [{ type: 'text', text: `cfg:${before + 2}:alice` }] });
    expect(REQUEST_SCOPED_COUNTER.created).toBe(before + 2);
  });

  it('serves a provider that depends on a request-scoped one (its scope bubbles up)', async () => {
    @Injectable()
    class UsesScoped {
      constructor(private readonly scoped: RequestScopedTools) {}

      @McpTool({ description: 'Uses a request-scoped dependency' })
      viaDependency(_args: unknown, ctx: McpToolContext) {
        return `via:${this.scoped.whichInstance(undefined, ctx)}`;
      }
    }
    const toolset = await start([Config, RequestScopedTools, UsesScoped]);
    const first = (await call(toolset, 'viaDependency')).content as Array<{ text: string }>;
    const second = (await call(toolset, 'viaDependency')).content as Array<{ text: string }>;
    expect(first[0].text).toMatch(/^via:cfg:\d+:alice$/);
    expect(second[0].text).not.toBe(first[0].text);
  });

  it('lets the providers option limit which providers are served', async () => {
    const toolset = await start(
      [
        PlainTools,
        { provide: 'GREETER', useValue: new ValueTools('hi') },
        Config,
        { provide: 'F', useFactory: () => new FactoryTools('f') },
      ],
      { providers: [ValueTools, FactoryTools] },
    );
    expect(names(toolset)).toEqual(['greet', 'whereFrom']);
  });

  it('serves nothing of a provider that the providers option does not list', async () => {
    const toolset = await start([PlainTools], { providers: [Config] });
    expect(toolset.list()).toEqual([]);
  });

  it('fails at init on duplicate tool names, naming both Class#method', async () => {
    @Injectable()
    class FirstTools {
      @McpTool({ name: 'search', description: 'one' })
      find() {
        return 'a';
      }
    }
    @Injectable()
    class SecondTools {
      @McpTool({ description: 'two' })
      search() {
        return 'b';
      }
    }
    const error = await bootError([FirstTools, SecondTools]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('Duplicate MCP tool "search"');
    expect(error.message).toContain('FirstTools#find');
    expect(error.message).toContain('SecondTools#search');
  });

  it('fails at init on a duplicate name within one class', async () => {
    @Injectable()
    class Twice {
      @McpTool({ name: 'same', description: 'one' })
      a() {
        return 'a';
      }

      @McpTool({ name: 'same', description: 'two' })
      b() {
        return 'b';
      }
    }
    const error = await bootError([Twice]);
    expect(error.message).toContain('Twice#a');
    expect(error.message).toContain('Twice#b');
  });

  it('accepts a name of exactly 128 characters and every allowed character', async () => {
    @Injectable()
    class Edge {
      @McpTool({ name: 'a'.repeat(128), description: 'long' })
      long() {
        return 'l';
      }

      @McpTool({ name: 'Az09_.-', description: 'charset' })
      charset() {
        return 'c';
      }
    }
    const toolset = await start([Edge]);
    expect(names(toolset)).toEqual(['Az09_.-', 'a'.repeat(128)]);
  });

  it.each([
    ['empty', ''],
    ['129 characters long', 'a'.repeat(129)],
    ['containing a space', 'get weather'],
    ['containing a slash', 'files/read'],
    ['containing a non-ASCII letter', 'météo'],
  ])('fails at init on a tool name %s, naming Class#method', async (_label, name) => {
    @Injectable()
    class BadNames {
      @McpTool({ name, description: 'bad' })
      badTool() {
        return 'x';
      }
    }
    const error = await bootError([BadNames]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('BadNames#badTool');
    expect(error.message).toContain(`invalid name "${name}"`);
    expect(error.message).toContain('1 to 128 characters');
  });

  it.each([
    ['type array', { type: 'array', items: { type: 'string' } }, 'its root type is "array"'],
    ['no type', { properties: { a: { type: 'string' } } }, 'its root type is undefined'],
    ['type string', { type: 'string' }, 'its root type is "string"'],
  ])('fails at boot on a raw input schema with %s, naming Class#method', async (_label, input, reason) => {
    @Injectable()
    class BadSchema {
      @McpTool({ description: 'bad schema', input })
      tool() {
        return 'x';
      }
    }
    const error = await bootError([BadSchema]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('BadSchema#tool');
    expect(error.message).toContain('input schema is invalid');
    expect(error.message).toContain(reason);
  });

  it('fails at boot on a raw schema that Ajv cannot compile, naming Class#method', async () => {
    @Injectable()
    class Uncompilable {
      @McpTool({ description: 'bad', input: { type: 'object', properties: { a: { type: 'strnig' } } } })
      broken() {
        return 'x';
      }
    }
    const error = await bootError([Uncompilable]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('Uncompilable#broken');
    expect(error.message).toContain('input schema is invalid');
  });

  it.each([
    ['a scope with a space', ['read write']],
    ['a scope with a quote', ['a"b']],
    ['a scope that is not a string', [42]],
    ['scopes that are not an array', 'admin'],
  ])('fails at boot on %s in scopes, naming Class#method', async (_label, scopes) => {
    @Injectable()
    class BadScopes {
      @McpTool({ description: 'bad', scopes: scopes as string[] })
      guarded() {
        return 'x';
      }
    }
    const error = await bootError([BadScopes]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('@McpTool on BadScopes#guarded: scopes must be an array of scope names');
  });

  it('fails at boot on an invalid x-mcp-header annotation, naming Class#method, the tool and the problem', async () => {
    @Injectable()
    class BadHeader {
      @McpTool({
        description: 'bad',
        input: { type: 'object', properties: { ratio: { type: 'number', 'x-mcp-header': 'Ratio' } } },
      })
      scale() {
        return 'x';
      }
    }
    const error = await bootError([BadHeader]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('BadHeader#scale');
    expect(error.message).toContain('invalid x-mcp-header');
    expect(error.message).toContain('not "number"');
  });

  it('fails at boot on an empty task option, as McpRegistry.addTool does', async () => {
    @Injectable()
    class EmptyTask {
      @McpTool({ description: 'bad', task: '' as never })
      job() {
        return 'x';
      }
    }
    const error = await bootError([EmptyTask]);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain('EmptyTask#job: @McpTool option "task" is ""');
  });

  it('fails at boot on an output schema whose root type is not object', async () => {
    @Injectable()
    class BadOutput {
      @McpTool({ description: 'bad', output: { type: 'array' } })
      list() {
        return [];
      }
    }
    const error = await bootError([BadOutput]);
    expect(error.message).toContain('BadOutput#list');
    expect(error.message).toContain('output schema is invalid');
  });

  it('publishes title, output schema, annotations, icons and _meta when declared', async () => {
    @Injectable()
    class Rich {
      @McpTool({
        name: 'weather',
        title: 'Weather',
        description: 'Gets the weather',
        input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        output: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
        annotations: { readOnlyHint: true },
        icons: [{ src: 'https://example.com/w.png', mimeType: 'image/png' }],
        meta: { 'example.com/tier': 'free' },
      })
      weather() {
        return { celsius: 21 };
      }
    }
    const toolset = await start([Rich]);
    expect(toolset.get('weather')?.definition).toEqual({
      name: 'weather',
      title: 'Weather',
      description: 'Gets the weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
      annotations: { readOnlyHint: true },
      icons: [{ src: 'https://example.com/w.png', mimeType: 'image/png' }],
      _meta: { 'example.com/tier': 'free' },
    });
  });

  it('passes validated DTO arguments and the tool context to the handler', async () => {
    const seen: Array<{ args: unknown; ctx: McpToolContext }> = [];
    @Injectable()
    class Recorder {
      @McpTool({ description: 'records', input: EchoInput })
      record(args: EchoInput, ctx: McpToolContext) {
        seen.push({ args, ctx });
        return 'ok';
      }
    }
    const toolset = await start([Recorder]);
    await toolset.deliver(
      {
        jsonrpc: '2.0',
        id: 'r-1',
        method: 'tools/call',
        params: { name: 'record', arguments: { text: 'x', extra: 1 }, _meta: { progressToken: 't' } },
      },
      context,
    );
    expect(seen).toHaveLength(1);
    expect(seen[0].args).toBeInstanceOf(EchoInput);
    expect(seen[0].args).toEqual({ text: 'x' });
    expect(seen[0].ctx).toMatchObject({
      principal,
      sessionId: 's-1',
      mount: 'test',
      protocolVersion: '2025-11-25',
      requestId: 'r-1',
      meta: { progressToken: 't' },
    });
    expect(seen[0].ctx.signal).toBeInstanceOf(AbortSignal);
  });

  it('turns a failing request-scoped resolution into a rejected delivery, not an isError result', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class NeedsConnection {
      constructor(@Inject('CONNECTION') private readonly connection: string) {}

      @McpTool({ description: 'needs a per-request connection' })
      query() {
        return this.connection;
      }
    }
    const outage = new Error('connection pool exhausted');
    const toolset = await start([
      {
        provide: 'CONNECTION',
        scope: Scope.REQUEST,
        useFactory: () => {
          throw outage;
        },
      },
      NeedsConnection,
    ]);
    await expect(
      toolset.deliver(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query', arguments: {} } },
        context,
      ),
    ).rejects.toMatchObject({
      name: 'McpInfrastructureError',
      cause: outage,
      message: expect.stringContaining('connection pool exhausted'),
    });
  });
});

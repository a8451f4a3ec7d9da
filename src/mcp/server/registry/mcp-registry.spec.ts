import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { getMcpToolsetToken } from '../../mcp.constants';
import { McpModule } from '../../mcp.module';
import type { JsonRpcSuccess } from '../../protocol/jsonrpc';
import { createInMemoryMcpStores } from '../../testing/in-memory-stores';
import { McpTool } from '../decorators/mcp-tool.decorator';
import { MCP_PUBSUB, type McpPubSub } from '../pubsub/mcp-pubsub.providers';
import type { Toolset } from '../dispatch/toolset';
import { McpRegistry, getMcpRegistryToken } from './mcp-registry';

const alice: McpDeliveryContext = {
  principal: { key: 'alice', label: 'Alice', raw: null },
  sessionId: null,
  protocolVersion: '2025-11-25',
};
const bob: McpDeliveryContext = { ...alice, principal: { key: 'bob', label: 'Bob', raw: null } };
const object = { type: 'object', properties: {} };
const ratioSchema = { type: 'object', properties: { ratio: { type: 'number', 'x-mcp-header': 'Ratio' } } };

/** A decorated tool whose `x-mcp-header` no client accepts (a number property). */
@Injectable()
class BadHeaderTools {
  @McpTool({ description: 'bad', input: ratioSchema })
  scale() {
    return 'x';
  }
}

/** The error a mount serving `BadHeaderTools` fails its boot with. */
async function decoratedBootError(): Promise<Error> {
  const moduleRef = await Test.createTestingModule({
    imports: [McpModule.forRoot({ auth: () => null, stores: createInMemoryMcpStores() })],
    providers: [BadHeaderTools],
  }).compile();
  const booting = moduleRef.createNestApplication({ logger: false });
  // A boot that succeeds yields an error the test's McpConfigurationError check then refuses.
  const outcome = await booting.init().then(
    () => new Error('expected the boot to fail'),
    (error: Error) => error,
  );
  await booting.close().catch(() => undefined);
  return outcome;
}

/** Adding, removing and switching handlers at run time, on a mount of in-memory stores. */
describe('McpRegistry', () => {
  let app: INestApplication;
  let registry: McpRegistry;
  let toolset: Toolset;
  let stores: ReturnType<typeof createInMemoryMcpStores>;

  const list = async (method: string, key: string, context = alice): Promise<string[]> => {
    const response = (await toolset.deliver({ jsonrpc: '2.0', id: 1, method, params: {} }, context)) as JsonRpcSuccess;
    return (
      (response.result as Record<string, { name?: string; uri?: string; uriTemplate?: string }[]>)[key] ?? []
    ).map((entry) => (entry.name ?? entry.uri ?? entry.uriTemplate) as string);
  };

  beforeAll(async () => {
    stores = createInMemoryMcpStores();
    const moduleRef = await Test.createTestingModule({
      imports: [McpModule.forRoot({ auth: () => null, stores })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    registry = app.get(McpRegistry);
    toolset = app.get<Toolset>(getMcpToolsetToken());
  });

  afterAll(async () => {
    await app?.close();
  });

  it('is served under its mount token and names its mount', () => {
    expect(app.get(getMcpRegistryToken('default'))).toBe(registry);
    expect(registry.mount).toBe('default');
  });

  it('adds a tool once, refuses the same name again, and removes it (false for an unknown name)', async () => {
    await registry.addTool(
      {
        name: 'echo',
        description: 'Echoes',
        input: object,
        output: { type: 'object', properties: { text: { type: 'string' } } },
      },
      ({ text }) => ({ text }),
    );
    expect(await list('tools/list', 'tools')).toEqual(['echo']);
    await expect(registry.addTool({ name: 'echo', description: 'd', input: object }, () => 'x')).rejects.toThrow(
      McpConfigurationError,
    );
    expect(await registry.removeTool('echo')).toBe(true);
    expect(await registry.removeTool('echo')).toBe(false);
    expect(await list('tools/list', 'tools')).toEqual([]);
  });

  it('refuses a bad tool name, a schema whose root is not an object, and a schema that does not compile', async () => {
    await expect(registry.addTool({ name: 'bad name!', description: 'd', input: object }, () => 'x')).rejects.toThrow(
      McpConfigurationError,
    );
    await expect(
      registry.addTool({ name: 'arr', description: 'd', input: { type: 'array' } }, () => 'x'),
    ).rejects.toThrow(/root type is "array", not "object"/);
    await expect(
      registry.addTool({ name: 'out', description: 'd', input: object, output: { type: 'string' } }, () => 'x'),
    ).rejects.toThrow(/root type is "string", not "object"/);
    await expect(
      registry.addTool(
        { name: 'broken', description: 'd', input: { type: 'object', properties: { a: { type: 'nonsense' } } } },
        () => 'x',
      ),
    ).rejects.toThrow(McpConfigurationError);
    expect(await list('tools/list', 'tools')).toEqual([]);
  });

  it('refuses a tool whose x-mcp-header no client accepts with the error a decorated one fails its boot with', async () => {
    const decorated = await decoratedBootError();
    expect(decorated).toBeInstanceOf(McpConfigurationError);
    const runtime = registry.addTool({ name: 'scale', description: 'bad', input: ratioSchema }, () => 'x');
    await expect(runtime).rejects.toThrow(
      new McpConfigurationError(decorated.message.replace('BadHeaderTools#scale', 'McpRegistry#addTool(scale)')),
    );
    expect(await list('tools/list', 'tools')).toEqual([]);
  });

  it('serves a tool with a valid x-mcp-header, its annotation published in tools/list', async () => {
    const input = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } };
    await registry.addTool({ name: 'route', description: 'Routes', input }, ({ region }) => region);
    const response = (await toolset.deliver(
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      alice,
    )) as JsonRpcSuccess;
    expect((response.result.tools as { inputSchema: unknown }[])[0].inputSchema).toEqual(input);
    expect(await registry.removeTool('route')).toBe(true);
  });

  it('adds and removes prompts, resources and templates; removing an unknown one resolves false', async () => {
    await registry.addPrompt(
      { name: 'greet', arguments: [{ name: 'who', required: true }] },
      ({ who }) => `Hello ${who}`,
    );
    await registry.addPrompt({ name: 'plain' }, () => 'Hi');
    expect((await list('prompts/list', 'prompts')).sort()).toEqual(['greet', 'plain']);
    expect(await registry.removePrompt('greet')).toBe(true);
    expect(await registry.removePrompt('greet')).toBe(false);
    expect(await registry.removePrompt('plain')).toBe(true);

    await registry.addResource({ name: 'readme', uri: 'docs://readme', mimeType: 'text/plain' }, () => 'read me');
    await registry.addResource({ name: 'license', uri: 'docs://license' }, () => 'MIT');
    expect((await list('resources/list', 'resources')).sort()).toEqual(['license', 'readme']);
    expect(await registry.removeResource('docs://readme')).toBe(true);
    expect(await registry.removeResource('docs://readme')).toBe(false);
    await expect(registry.addResource({ name: 'rel', uri: 'relative/path' }, () => 'x')).rejects.toThrow(
      McpConfigurationError,
    );

    await registry.addResourceTemplate({ name: 'page', uriTemplate: 'docs://pages/{id}' }, ({ uri }) => uri);
    expect(await list('resources/templates/list', 'resourceTemplates')).toEqual(['page']);
    expect(await registry.removeResourceTemplate('docs://pages/{id}')).toBe(true);
    expect(await registry.removeResourceTemplate('docs://pages/{id}')).toBe(false);
    await expect(
      registry.addResourceTemplate({ name: 'bad', uriTemplate: 'docs://{unclosed' }, () => 'x'),
    ).rejects.toThrow(McpConfigurationError);
  });

  it('completes the arguments of an added prompt and the variables of an added template with their completers; a completer of an unknown name is refused', async () => {
    const complete = async (ref: Record<string, unknown>, name: string, value: string) =>
      (
        (await toolset.deliver(
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'completion/complete',
            params: { ref, argument: { name, value }, context: { arguments: { team: 'ops' } } },
          },
          alice,
        )) as JsonRpcSuccess
      ).result;
    await registry.addPrompt(
      {
        name: 'lead',
        arguments: [{ name: 'team' }, { name: 'who' }],
        complete: {
          who: (value, context) => [`${context.arguments.team}-${value}`, `${context.principal.key}-${value}`],
        },
      },
      () => 'lead',
    );
    await registry.addResourceTemplate(
      {
        name: 'ticket',
        uriTemplate: 'tickets://{id}',
        complete: { id: (value) => ({ values: [`${value}1`], total: 10, hasMore: true }) },
      },
      ({ uri }) => uri,
    );
    expect(toolset.getCapabilities().completions).toEqual({});
    expect(await complete({ type: 'ref/prompt', name: 'lead' }, 'who', 'x')).toEqual({
      completion: { values: ['ops-x', 'alice-x'], total: 2, hasMore: false },
    });
    expect(await complete({ type: 'ref/prompt', name: 'lead' }, 'team', 'o')).toEqual({
      completion: { values: [], total: 0, hasMore: false },
    });
    expect(await complete({ type: 'ref/resource', uri: 'tickets://{id}' }, 'id', '4')).toEqual({
      completion: { values: ['41'], total: 10, hasMore: true },
    });
    await expect(
      registry.addPrompt({ name: 'odd', arguments: [{ name: 'a' }], complete: { b: () => [] } }, () => 'x'),
    ).rejects.toThrow(/"complete" names "b", which is not one of its arguments \(a\)/);
    await expect(
      registry.addResourceTemplate({ name: 'odd', uriTemplate: 'odd://{a}', complete: { b: () => [] } }, () => 'x'),
    ).rejects.toThrow(McpConfigurationError);
    expect(await registry.removePrompt('lead')).toBe(true);
    expect(await registry.removeResourceTemplate('tickets://{id}')).toBe(true);
  });

  it('disables a tool for some principals or everyone, and enables it back, stored in the switch store', async () => {
    await registry.addTool({ name: 'secret', description: 'd', input: object }, () => 'hidden');
    await registry.disable('tool', 'secret', { principals: ['alice'] });
    expect(await list('tools/list', 'tools', alice)).toEqual([]);
    expect(await list('tools/list', 'tools', bob)).toEqual(['secret']);
    await registry.enable('tool', 'secret', { principals: ['alice'] });
    expect(await list('tools/list', 'tools', alice)).toEqual(['secret']);
    await registry.disable('tool', 'secret');
    expect(await list('tools/list', 'tools', bob)).toEqual([]);
    expect(await stores.handlerSwitches.list()).toHaveLength(1);
    await registry.enable('tool', 'secret');
    expect(await list('tools/list', 'tools', bob)).toEqual(['secret']);
    expect(await stores.handlerSwitches.list()).toEqual([]);
    expect(await registry.removeTool('secret')).toBe(true);
  });

  it('refuses empty or non-string principal keys in enable and disable, changing nothing', async () => {
    const message = 'McpRegistry: principal keys must be non-empty strings (got ["alice",""])';
    await expect(registry.disable('tool', 'x', { principals: ['alice', ''] })).rejects.toThrow(
      new McpConfigurationError(message),
    );
    await expect(registry.enable('prompt', 'x', { principals: ['alice', ''] })).rejects.toThrow(
      new McpConfigurationError(message),
    );
    await expect(registry.disable('resource', 'x', { principals: [7 as unknown as string] })).rejects.toThrow(
      'McpRegistry: principal keys must be non-empty strings (got [7])',
    );
    expect(await stores.handlerSwitches.list()).toEqual([]);
  });

  it('applies switches another replica announces on the registry channel, and ignores malformed or foreign messages', async () => {
    const pubsub = app.get<McpPubSub>(MCP_PUBSUB);
    await registry.addPrompt({ name: 'shared' }, () => 'x');
    // Another replica wrote the switch, then announced it.
    await stores.handlerSwitches.disable('prompt', 'shared', null);
    await pubsub.publish('mcp:default:registry', 'not json');
    await pubsub.publish('mcp:default:registry', JSON.stringify({ o: 'other', m: 'notifications/unknown', r: true }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await list('prompts/list', 'prompts')).toEqual(['shared']);
    await pubsub.publish(
      'mcp:default:registry',
      JSON.stringify({ o: 'other', m: 'notifications/prompts/list_changed', r: true }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(await list('prompts/list', 'prompts')).toEqual([]);
    await registry.enable('prompt', 'shared');
    expect(await registry.removePrompt('shared')).toBe(true);
  });
});

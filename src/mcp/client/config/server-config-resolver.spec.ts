import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpServerConfig } from '../interfaces/mcp-server-config.interface';
import type { McpTransportFactory } from '../transports/mcp-transport-factory.interface';
import { resolveServerConfig } from './server-config-resolver';

function failure(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the entry to be refused');
}

describe('resolveServerConfig', () => {
  it('names stdio for a command and http for a url', () => {
    expect(resolveServerConfig('local', { command: ['node', 'server.js'] })).toMatchObject({
      transport: 'stdio',
      command: ['node', 'server.js'],
    });
    expect(resolveServerConfig('remote', { url: 'http://127.0.0.1:1/mcp' })).toMatchObject({
      transport: 'http',
      url: 'http://127.0.0.1:1/mcp',
    });
  });

  it.each<[string, string, unknown, string]>([
    ['a name with a space', 'my server', { command: ['s'] }, 'the name must be 1 to'],
    ['an empty name', '', { command: ['s'] }, 'the name must be 1 to'],
    ['a null entry', 'ok', null, 'the entry must be an object'],
    ['a string entry', 'ok', 'node server.js', 'the entry must be an object'],
    [
      'an unknown version',
      'ok',
      { command: ['s'], version: '2024-01-01' },
      `"version" must be one of 'auto', '2026-07-28'`,
    ],
    ['a zero probeTimeoutMs', 'ok', { command: ['s'], probeTimeoutMs: 0 }, '"probeTimeoutMs" must be a number > 0'],
    [
      'a NaN probeTimeoutMs',
      'ok',
      { command: ['s'], probeTimeoutMs: Number.NaN },
      '"probeTimeoutMs" must be a number > 0',
    ],
    [
      'an unknown scope',
      'ok',
      { command: ['s'], scope: 'user' },
      `"scope" must be 'shared' or 'principal', got "user"`,
    ],
    ['a negative timeoutMs', 'ok', { command: ['s'], timeoutMs: -1 }, '"timeoutMs" must be a number > 0'],
    [
      'an announce that is a list',
      'ok',
      { command: ['s'], announce: ['elicitation'] },
      '"announce" must be an object with some of "elicitation", "sampling", "roots"',
    ],
    ['a null announce', 'ok', { url: 'http://a', announce: null }, '"announce" must be an object'],
    [
      'an announce of an unknown capability',
      'ok',
      { command: ['s'], announce: { tasks: true } },
      '"announce" names "tasks" (known: "elicitation", "sampling", "roots")',
    ],
    [
      'an announce that is not a boolean',
      'ok',
      { command: ['s'], announce: { sampling: 'yes' } },
      '"announce.sampling" must be true or false',
    ],
    ['neither command nor url', 'ok', { timeoutMs: 5 }, 'it has neither "command" nor "url"'],
    [
      'an unknown transport',
      'ok',
      { transport: 'websocket', url: 'ws://127.0.0.1' },
      `unknown transport "websocket" (known: 'stdio', 'http', 'toolset'`,
    ],
    ['a transport that is not a string', 'ok', { transport: 3 }, 'unknown transport 3'],
  ])('refuses %s, naming the server', (_case, name, entry, reason) => {
    const error = failure(() => resolveServerConfig(name, entry as McpServerConfig));
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect(error.message).toContain(`MCP server "${name}": ${reason}`);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a url that is not a string', { url: 8080 }, '"url" must be a string'],
    ['a url that does not parse', { url: 'http://' }, '"url" is not a valid URL: "http://"'],
    ['a url of another scheme', { url: 'ftp://127.0.0.1/mcp' }, '"url" must use http or https, got ftp:'],
    [
      'an unknown retry option',
      { url: 'http://127.0.0.1/mcp', retry: { tries: 1 } },
      'option "retry": unknown option "tries"',
    ],
    [
      'args next to an argv array',
      { command: ['node', 'server.js'], args: ['--x'] },
      '"args" is only allowed with a single-program "command" string',
    ],
    [
      'an unknown pool option',
      { command: ['s'], stateless: true, pool: { size: 2 } },
      'option "pool": unknown option "size"',
    ],
    [
      'a toolset entry without a principal',
      { transport: 'toolset' },
      'a toolset server needs "principal": a principal key, or { key, label }',
    ],
    [
      'a toolset entry with an empty principal',
      { transport: 'toolset', principal: '' },
      'a toolset server needs "principal"',
    ],
    [
      'a toolset entry whose principal has no key',
      { transport: 'toolset', principal: { label: 'Bot' } },
      'a toolset server needs "principal"',
    ],
    [
      'a toolset entry with an empty mount',
      { transport: 'toolset', principal: 'bot', mount: '' },
      '"mount" must be the name of a mount of this app',
    ],
  ])('refuses a built-in transport entry with %s, naming the server', (_case, entry, reason) => {
    const error = failure(() => resolveServerConfig('ok', entry as never));
    expect(error.message).toContain('MCP server "ok"');
    expect(error.message).toContain(reason);
  });

  it('turns a single-program command string with args into an argv', () => {
    expect(resolveServerConfig('ok', { command: 'node', args: ['server.js', '--port', '0'] })).toMatchObject({
      transport: 'stdio',
      command: ['node', 'server.js', '--port', '0'],
    });
    expect(resolveServerConfig('ok', { transport: 'toolset', principal: { key: 'bot' }, mount: 'admin' })).toEqual({
      transport: 'toolset',
      principal: { key: 'bot' },
      mount: 'admin',
    });
  });

  it('accepts every common setting on its allowed values', () => {
    const entry = {
      command: ['s'],
      version: 'auto',
      probeTimeoutMs: 10,
      scope: 'principal',
      timeoutMs: 20,
      announce: { elicitation: true, sampling: false, roots: true },
    } as McpServerConfig;
    expect(resolveServerConfig('ok', entry)).toMatchObject({
      transport: 'stdio',
      version: 'auto',
      scope: 'principal',
      timeoutMs: 20,
      announce: { elicitation: true, sampling: false, roots: true },
    });
    expect(resolveServerConfig('ok', { ...entry, scope: 'shared' })).toMatchObject({ scope: 'shared' });
  });

  describe('with an app transport', () => {
    const resolved: Array<[string, Record<string, unknown>]> = [];
    const socket: McpTransportFactory<object> = {
      transport: 'websocket',
      optionKeys: ['address'],
      resolve(server, entry) {
        resolved.push([server, entry]);
        if (typeof entry.address !== 'string') throw new Error('"address" must be a ws:// URL');
        if (entry.address === 'self') throw new Error(`MCP server "${server}": talks to itself`);
        return { address: entry.address };
      },
      create: () => {
        throw new Error('not built here');
      },
    };
    const unchecked: McpTransportFactory<object> = { transport: 'raw', create: socket.create };
    const factories = new Map<string, McpTransportFactory<object>>([
      ['websocket', socket],
      ['raw', unchecked],
    ]);
    beforeEach(() => (resolved.length = 0));

    it('keeps what the factory resolves, with the transport named', () => {
      expect(
        resolveServerConfig('ws', { transport: 'websocket', address: 'ws://127.0.0.1:9', timeoutMs: 5 }, factories),
      ).toEqual({ address: 'ws://127.0.0.1:9', transport: 'websocket' });
      expect(resolved).toEqual([['ws', { transport: 'websocket', address: 'ws://127.0.0.1:9', timeoutMs: 5 }]]);
    });

    it('refuses keys the factory does not declare, before asking it', () => {
      const error = failure(() => resolveServerConfig('ws', { transport: 'websocket', adress: 'x' }, factories));
      expect(error).toBeInstanceOf(McpConfigurationError);
      expect(error.message).toContain('MCP server "ws": unknown option "adress" (did you mean "address"?');
      expect(resolved).toEqual([]);
    });

    it("wraps the factory's own complaint with the server name and the ways to declare one", () => {
      const error = failure(() => resolveServerConfig('ws', { transport: 'websocket' }, factories));
      expect(error).toBeInstanceOf(McpConfigurationError);
      expect(error.message).toMatch(/^MCP server "ws": "address" must be a ws:\/\/ URL\. Declare \{ command:/);
    });

    it('passes on a complaint that already names the server unchanged', () => {
      const error = failure(() => resolveServerConfig('ws', { transport: 'websocket', address: 'self' }, factories));
      expect(error).not.toBeInstanceOf(McpConfigurationError);
      expect(error.message).toBe('MCP server "ws": talks to itself');
    });

    it('hands the whole entry on when the factory neither checks keys nor resolves', () => {
      expect(resolveServerConfig('r', { transport: 'raw', anything: 1 }, factories)).toEqual({
        transport: 'raw',
        anything: 1,
      });
    });
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { resolveClientOptions } from './client-options-resolver';

/** The directories serversFile made, removed after the suite. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function serversFile(document: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-servers-'));
  made.push(dir);
  const file = join(dir, 'mcp.json');
  writeFileSync(file, typeof document === 'string' ? document : JSON.stringify(document));
  return file;
}

describe('resolveClientOptions', () => {
  it('reads a Claude-Desktop mcpServers file, inferring stdio and http, merged with servers', () => {
    const file = serversFile({
      mcpServers: {
        files: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
          env: { A: '1' },
          cwd: '/tmp',
        },
        remote: { url: 'https://example.com/mcp', headers: { 'X-Team': 'a' } },
      },
    });
    const options = resolveClientOptions({
      serversFile: file,
      servers: { local: { transport: 'toolset', principal: 'svc' } },
    });
    expect(options.servers.files).toEqual({
      transport: 'stdio',
      command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
      env: { A: '1' },
      cwd: '/tmp',
    });
    expect(options.servers.remote).toEqual({
      transport: 'http',
      url: 'https://example.com/mcp',
      headers: { 'X-Team': 'a' },
    });
    expect(options.servers.local).toEqual({ transport: 'toolset', principal: 'svc' });
    expect(options.queue).toMatchObject({ bull: null, name: 'mcp-calls', worker: true });
  });

  it('refuses a shell command line, naming the server and saying how to fix it', () => {
    const file = serversFile({ mcpServers: { shell: { command: 'npx -y some-server && rm -rf /' } } });
    expect(() => resolveClientOptions({ serversFile: file })).toThrow(McpConfigurationError);
    expect(() => resolveClientOptions({ serversFile: file })).toThrow(/"shell".*args/s);
    expect(() => resolveClientOptions({ servers: { s: { command: 'node server.js' } } })).toThrow(/without a shell/);
  });

  it('fails at boot on a duplicate name, a missing file, invalid JSON or an entry without command or url', () => {
    const file = serversFile({ mcpServers: { twice: { url: 'http://127.0.0.1:1/mcp' } } });
    expect(() => resolveClientOptions({ serversFile: file, servers: { twice: { url: 'http://x/mcp' } } })).toThrow(
      /declared both/,
    );
    expect(() => resolveClientOptions({ serversFile: join(tmpdir(), 'does-not-exist', 'mcp.json') })).toThrow(
      /cannot read/,
    );
    expect(() => resolveClientOptions({ serversFile: serversFile('{ nope') })).toThrow(/not valid JSON/);
    expect(() => resolveClientOptions({ serversFile: serversFile({ servers: {} }) })).toThrow(/no "mcpServers"/);
    expect(() => resolveClientOptions({ servers: { odd: {} as never } })).toThrow(/neither "command" nor "url"/);
    expect(() => resolveClientOptions({ servers: { ftp: { url: 'ftp://x' } } })).toThrow(/http or https/);
  });

  it("commits outbound audit rows 'sync' unless audit.commit is 'async', and refuses anything else", () => {
    expect(resolveClientOptions({}).audit).toEqual({ commit: 'sync' });
    expect(resolveClientOptions({ advanced: { audit: { commit: 'async' } } }).audit).toEqual({ commit: 'async' });
    expect(() => resolveClientOptions({ advanced: { audit: { commit: 'fast' as 'sync' } } })).toThrow(
      `option "advanced.audit.commit" must be 'sync' or 'async'`,
    );
    expect(() => resolveClientOptions({ advanced: { audit: { comit: 'async' } as never } })).toThrow(
      'McpClientModule option "advanced.audit": unknown option "comit" (did you mean "commit"?',
    );
  });

  it('selects Bull when Redis is configured, or when the host shares a BullModule configuration', () => {
    expect(resolveClientOptions({ redis: 'redis://127.0.0.1:6379', queue: { prefix: 'p' } }).queue.bull).toEqual({
      redis: 'redis://127.0.0.1:6379',
      prefix: 'p',
    });
    expect(resolveClientOptions({}, { redis: { host: 'r' } }).queue.bull).toEqual({ redis: { host: 'r' } });
    expect(() => resolveClientOptions({ queue: { concurrency: 0 } })).toThrow(/positive integer/);
  });

  describe('unknown option keys', () => {
    const fail = (fn: () => unknown): McpConfigurationError => {
      try {
        fn();
      } catch (error) {
        return error as McpConfigurationError;
      }
      throw new Error('expected a McpConfigurationError');
    };

    it('refuses "timeout" on a server entry, suggesting "timeoutMs" and listing the known keys', () => {
      const error = fail(() =>
        resolveClientOptions({ servers: { x: { command: ['node', 's.js'], timeout: 3000 } as never } }),
      );
      expect(error).toBeInstanceOf(McpConfigurationError);
      expect(error.message).toBe(
        'MCP server "x": unknown option "timeout" (did you mean "timeoutMs"? known: version, probeTimeoutMs, scope, timeoutMs, announce, transport, command, args, env, cwd, stateless, pool, closeGraceMs, killGraceMs)',
      );
    });

    it('checks each built-in transport against its own keys', () => {
      expect(
        fail(() => resolveClientOptions({ servers: { h: { url: 'https://example.com/mcp', header: {} } as never } }))
          .message,
      ).toMatch(
        /^MCP server "h": unknown option "header" \(did you mean "headers"\? known: .*url, headers, bearerToken, auth, retry, maxResponseBytes, maxEventChars\)$/,
      );
      expect(
        fail(() =>
          resolveClientOptions({ servers: { t: { transport: 'toolset', principal: 'p', mounts: 'a' } as never } }),
        ).message,
      ).toContain('MCP server "t": unknown option "mounts" (did you mean "mount"?');
      // A stdio option that belongs to StdioTransport, not to a server entry, is no key of it either.
      expect(
        fail(() => resolveClientOptions({ servers: { s: { command: ['x'], stderrLimitBytes: 5 } as never } })).message,
      ).toContain('unknown option "stderrLimitBytes"');
    });

    it('checks nested pool and retry settings', () => {
      expect(
        fail(() =>
          resolveClientOptions({
            servers: { s: { command: ['x'], stateless: true, pool: { max: 1, idleMs: 5, idle: 1 } as never } },
          }),
        ).message,
      ).toBe(
        'MCP server "s": option "pool": unknown option "idle" (did you mean "idleMs"? known: max, idleMs, maxInvalidLines)',
      );
      expect(
        fail(() =>
          resolveClientOptions({ servers: { h: { url: 'https://example.com/mcp', retry: { retires: 1 } as never } } }),
        ).message,
      ).toContain('MCP server "h": option "retry": unknown option "retires" (did you mean "retries"?');
    });

    it('refuses unknown keys of the module options and of queue', () => {
      expect(fail(() => resolveClientOptions({ defaultTimeout: 5 } as never)).message).toMatch(
        /^McpClientModule: unknown option "defaultTimeout" \(did you mean "defaultTimeoutMs"\? known: servers, serversFile/,
      );
      expect(fail(() => resolveClientOptions({ queue: { concurency: 2 } } as never)).message).toMatch(
        /^McpClientModule option "queue": unknown option "concurency" \(did you mean "concurrency"\?/,
      );
      expect(fail(() => resolveClientOptions({ zzz: 1 } as never)).message).toMatch(
        /^McpClientModule: unknown option "zzz" \(known: /,
      );
    });

    it('applies the same check to the entries of an mcpServers file', () => {
      const file = serversFile({
        mcpServers: { files: { command: 'npx', args: ['-y', 'x'], enviroment: { A: '1' } } },
      });
      expect(fail(() => resolveClientOptions({ serversFile: file })).message).toMatch(
        /^MCP server "files": unknown option "enviroment"/,
      );
    });

    it('leaves the entries of a registered transport unchecked unless its factory declares optionKeys', () => {
      const factories = new Map([['ws', { transport: 'ws', create: () => ({ deliver: async () => ({}) as never }) }]]);
      expect(
        resolveClientOptions({ servers: { w: { transport: 'ws', anything: 1 } } }, undefined, factories as never)
          .servers.w,
      ).toMatchObject({ anything: 1 });
    });
  });
});

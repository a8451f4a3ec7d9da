import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { resolveClientOptions } from './client-options-resolver';

function serversFile(document: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mcp-servers-')), 'mcp.json');
  writeFileSync(file, typeof document === 'string' ? document : JSON.stringify(document));
  return file;
}

describe('resolveClientOptions', () => {
  it('reads a Claude-Desktop mcpServers file, inferring stdio and http, merged with servers', () => {
    const file = serversFile({
      mcpServers: {
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { A: '1' }, cwd: '/tmp' },
        remote: { url: 'https://example.com/mcp', headers: { 'X-Team': 'a' } },
      },
    });
    const options = resolveClientOptions({ serversFile: file, servers: { local: { transport: 'toolset', principal: 'svc' } } });
    expect(options.servers.files).toEqual({ transport: 'stdio', command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { A: '1' }, cwd: '/tmp' });
    expect(options.servers.remote).toEqual({ transport: 'http', url: 'https://example.com/mcp', headers: { 'X-Team': 'a' } });
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
    expect(() => resolveClientOptions({ serversFile: file, servers: { twice: { url: 'http://x/mcp' } } })).toThrow(/declared both/);
    expect(() => resolveClientOptions({ serversFile: join(tmpdir(), 'does-not-exist', 'mcp.json') })).toThrow(/cannot read/);
    expect(() => resolveClientOptions({ serversFile: serversFile('{ nope') })).toThrow(/not valid JSON/);
    expect(() => resolveClientOptions({ serversFile: serversFile({ servers: {} }) })).toThrow(/no "mcpServers"/);
    expect(() => resolveClientOptions({ servers: { odd: {} as never } })).toThrow(/neither "command" nor "url"/);
    expect(() => resolveClientOptions({ servers: { ftp: { url: 'ftp://x' } } })).toThrow(/http or https/);
  });

  it('selects Bull when Redis is configured, or when the host shares a BullModule configuration', () => {
    expect(resolveClientOptions({ queue: { redis: 'redis://127.0.0.1:6379', prefix: 'p' } }).queue.bull).toEqual({ redis: 'redis://127.0.0.1:6379', prefix: 'p' });
    expect(resolveClientOptions({}, { redis: { host: 'r' } }).queue.bull).toEqual({ redis: { host: 'r' } });
    expect(() => resolveClientOptions({ queue: { concurrency: 0 } })).toThrow(/positive integer/);
  });
});

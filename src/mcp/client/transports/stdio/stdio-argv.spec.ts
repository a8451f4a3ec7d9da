import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { assertStdioArgv, toStdioArgv } from './stdio-argv';

describe('stdio argv', () => {
  it('accepts a non-empty array of strings', () => {
    expect(() => assertStdioArgv(['node', 'server.js', '--flag with space'])).not.toThrow();
  });

  it('rejects a shell string, naming it and explaining argv', () => {
    expect(() => assertStdioArgv('npx -y server')).toThrow(McpConfigurationError);
    expect(() => assertStdioArgv('npx -y server')).toThrow(/"npx -y server".*argv array.*without a shell/s);
  });

  it('rejects empty arrays, non-strings, NUL characters and a blank program', () => {
    expect(() => assertStdioArgv([])).toThrow(/empty array/);
    expect(() => assertStdioArgv(['node', 1])).toThrow(/index 1/);
    expect(() => assertStdioArgv(['node', 'a\0b'])).toThrow(/index 1/);
    expect(() => assertStdioArgv(['  '])).toThrow(/empty program name/);
    expect(() => assertStdioArgv(undefined)).toThrow(/must be an array/);
  });

  it('builds argv from { command, args }', () => {
    expect(toStdioArgv({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] })).toEqual([
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything',
    ]);
    expect(toStdioArgv({ command: 'mcp-server' })).toEqual(['mcp-server']);
    expect(toStdioArgv({ command: '/opt/My Apps/server', args: [] })).toEqual(['/opt/My Apps/server']);
  });

  it('rejects a command with whitespace and no args, showing how to split it', () => {
    expect(() => toStdioArgv({ command: 'npx -y server' })).toThrow(McpConfigurationError);
    expect(() => toStdioArgv({ command: 'npx -y server' })).toThrow(/without a shell.*"args"/s);
  });

  it('rejects args that are not strings and a missing command', () => {
    expect(() => toStdioArgv({ command: 'npx', args: [1 as unknown as string] })).toThrow(
      /"args" must be an array of strings/,
    );
    expect(() => toStdioArgv({ command: '' })).toThrow(/"command" must be a non-empty string/);
  });
});

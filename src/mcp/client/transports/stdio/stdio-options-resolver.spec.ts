import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { resolveStdioOptions } from './stdio-options-resolver';
import type { StdioTransportOptions } from './stdio.options';

describe('resolveStdioOptions', () => {
  it('applies the defaults', () => {
    expect(resolveStdioOptions({ command: ['server'] })).toMatchObject({
      command: ['server'],
      env: {},
      timeoutMs: 30_000,
      pool: null,
      clientInfo: { name: 'durable-mcp' },
      closeGraceMs: 2000,
      killGraceMs: 2000,
      stderrLimitBytes: 8192,
    });
  });

  it('requires stateless: true next to pool', () => {
    expect(() => resolveStdioOptions({ command: ['s'], pool: { max: 1, idleMs: 10 } })).toThrow(McpConfigurationError);
    expect(() => resolveStdioOptions({ command: ['s'], stateless: false, pool: { max: 1, idleMs: 10 } })).toThrow(
      /stateless: true/,
    );
    expect(resolveStdioOptions({ command: ['s'], stateless: true, pool: { max: 3, idleMs: 10 } }).pool).toEqual({
      max: 3,
      idleMs: 10,
      maxInvalidLines: 10,
    });
  });

  it.each<[string, Partial<StdioTransportOptions>, RegExp]>([
    ['timeoutMs', { timeoutMs: 0 }, /"timeoutMs" must be a finite number > 0/],
    ['env value', { env: { A: 1 as unknown as string } }, /"env\.A"/],
    ['env name', { env: { 'A=B': 'x' } }, /"env\.A=B"/],
    ['cwd', { cwd: '' }, /"cwd"/],
    ['pool.max', { stateless: true, pool: { max: 1.5, idleMs: 1 } }, /"pool\.max"/],
    ['pool.idleMs', { stateless: true, pool: { max: 1 } as never }, /"pool\.idleMs"/],
    ['clientInfo', { clientInfo: { name: 'x' } as never }, /"clientInfo"/],
    ['clientCapabilities', { clientCapabilities: [] as never }, /"clientCapabilities"/],
  ])('rejects an invalid %s', (_name, options, message) => {
    expect(() => resolveStdioOptions({ command: ['s'], ...options })).toThrow(message);
  });

  it('copies the configuration so later changes to it have no effect', () => {
    const env = { A: 'a' };
    const command = ['s'];
    const resolved = resolveStdioOptions({ command, env });
    env.A = 'changed';
    command.push('extra');
    expect(resolved.env).toEqual({ A: 'a' });
    expect(resolved.command).toEqual(['s']);
  });
});

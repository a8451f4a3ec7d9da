import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { resolveStdioOptions } from './stdio-options-resolver';
import type { StdioTransportOptions } from './stdio.options';

describe('resolveStdioOptions, every option checked', () => {
  it.each<[string, unknown, string]>([
    ['no object', null, 'StdioTransport: option "options" must be an object with at least { command: [...] }.'],
    ['a string', 'npx server', 'StdioTransport: option "options" must be an object with at least { command: [...] }.'],
  ])('rejects %s as the options', (_case, options, message) => {
    expect(() => resolveStdioOptions(options as StdioTransportOptions)).toThrow(new McpConfigurationError(message));
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['stateless that is not a boolean', { stateless: 'yes' }, '"stateless" must be a boolean'],
    ['cwd that is not a string', { cwd: 7 }, '"cwd" must be a non-empty path'],
    [
      'clientInfo without a version',
      { clientInfo: { name: 'n' } },
      '"clientInfo" must be an object { name: string, version: string }',
    ],
    ['clientInfo that is null', { clientInfo: null }, '"clientInfo" must be an object'],
    ['an unsupported protocolVersion', { protocolVersion: '2099-01-01' }, '"protocolVersion" must be one of 2025-'],
    ['clientCapabilities that is null', { clientCapabilities: null }, '"clientCapabilities" must be an object'],
    ['clientCapabilities that is a string', { clientCapabilities: 'all' }, '"clientCapabilities" must be an object'],
    ['onSpawn that is not a function', { onSpawn: 'log' }, '"onSpawn" must be a function (pid) => void'],
    ['env that is an array', { env: ['A=1'] }, '"env" must be an object of string values'],
    ['env that is null', { env: null }, '"env" must be an object of string values'],
    [
      'an env name that is empty',
      { env: { '': 'x' } },
      '"env." must be a string, under a name without "=" or NUL characters',
    ],
    ['an env name with NUL', { env: { 'A\0': 'x' } }, 'must be a string, under a name without "=" or NUL characters'],
    ['an env value with NUL', { env: { A: 'x\0y' } }, '"env.A" must be a string'],
    ['a timeoutMs that is not finite', { timeoutMs: Infinity }, '"timeoutMs" must be a finite number > 0'],
    ['a timeoutMs that is a string', { timeoutMs: '5' }, '"timeoutMs" must be a finite number > 0'],
    ['a negative closeGraceMs', { closeGraceMs: -1 }, '"closeGraceMs" must be a finite number >= 0'],
    ['a NaN killGraceMs', { killGraceMs: Number.NaN }, '"killGraceMs" must be a finite number >= 0'],
    ['a negative stderrLimitBytes', { stderrLimitBytes: -5 }, '"stderrLimitBytes" must be a finite number >= 0'],
    ['a zero maxMessageChars', { maxMessageChars: 0 }, '"maxMessageChars" must be a finite number > 0'],
    ['a pool that is a number', { stateless: true, pool: 4 }, '"pool" must be an object { max, idleMs }'],
    ['a pool max of zero', { stateless: true, pool: { max: 0, idleMs: 1 } }, '"pool.max" must be an integer >= 1'],
    [
      'a pool max that is a string',
      { stateless: true, pool: { max: '2', idleMs: 1 } },
      '"pool.max" must be an integer >= 1',
    ],
    [
      'a zero pool idleMs',
      { stateless: true, pool: { max: 1, idleMs: 0 } },
      '"pool.idleMs" must be a finite number > 0',
    ],
    [
      'a negative pool maxInvalidLines',
      { stateless: true, pool: { max: 1, idleMs: 5, maxInvalidLines: -1 } },
      '"pool.maxInvalidLines" must be a finite number >= 0',
    ],
    [
      'an unknown pool option',
      { stateless: true, pool: { max: 1, idleMs: 5, maxIdle: 3 } },
      'StdioTransport option "pool": unknown option "maxIdle"',
    ],
    ['an unknown option', { timout: 5 }, 'StdioTransport: unknown option "timout" (did you mean "timeoutMs"?'],
  ])('rejects %s, saying which option and what it must be', (_case, options, message) => {
    let thrown: unknown;
    try {
      resolveStdioOptions({ command: ['server'], ...options });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpConfigurationError);
    expect((thrown as Error).message).toContain(message);
  });

  it('accepts zero where zero means "at once" or "none", and keeps every value given', () => {
    const onSpawn = (): void => undefined;
    const resolved = resolveStdioOptions({
      command: ['server', '--flag'],
      cwd: '/tmp',
      stateless: true,
      pool: { max: 2, idleMs: 50, maxInvalidLines: 0 },
      protocolVersion: '2025-06-18',
      clientInfo: { name: 'app', version: '2.0.0' },
      clientCapabilities: { roots: {} },
      closeGraceMs: 0,
      killGraceMs: 0,
      stderrLimitBytes: 0,
      maxMessageChars: 100,
      timeoutMs: 250,
      onSpawn,
    });
    expect(resolved).toEqual({
      command: ['server', '--flag'],
      env: {},
      cwd: '/tmp',
      timeoutMs: 250,
      pool: { max: 2, idleMs: 50, maxInvalidLines: 0 },
      clientInfo: { name: 'app', version: '2.0.0' },
      protocolVersion: '2025-06-18',
      clientCapabilities: { roots: {} },
      closeGraceMs: 0,
      killGraceMs: 0,
      stderrLimitBytes: 0,
      maxMessageChars: 100,
      onSpawn,
    });
  });

  it('treats a null pool as no pool, even for a server that is not stateless', () => {
    expect(
      resolveStdioOptions({ command: ['server'], pool: null } as unknown as StdioTransportOptions).pool,
    ).toBeNull();
  });
});

import { ConsoleScopeError, scopeOf } from './console-scope';
import { resolveConsoleOptions } from './mcp-console.options';

describe('the console scope of a request', () => {
  it('is every row without a scope option, else what the option returns, without duplicate keys', async () => {
    expect(await scopeOf(undefined, {})).toBe('all');
    expect(await scopeOf(() => 'all', {})).toBe('all');
    expect(
      await scopeOf(async (request) => ({ principalKeys: [(request as { user: string }).user, 'alice'] }), {
        user: 'alice',
      }),
    ).toEqual({ principalKeys: ['alice'] });
    expect(await scopeOf(() => ({ principalKeys: [] }), {})).toEqual({ principalKeys: [] });
  });

  it.each([[undefined], [null], ['everything'], [{}], [{ principalKeys: 'alice' }], [{ principalKeys: [1] }]])(
    'refuses %p rather than widen what a reader sees',
    async (value) => {
      await expect(scopeOf(() => value as never, {})).rejects.toThrow(ConsoleScopeError);
      await expect(scopeOf(() => value as never, {})).rejects.toThrow(
        /the "scope" option returned .*; it must return 'all' or \{ principalKeys: string\[\] \}/,
      );
    },
  );

  it('is an option that must be a function', () => {
    const scope = () => 'all' as const;
    expect(resolveConsoleOptions({ scope }).scope).toBe(scope);
    expect(resolveConsoleOptions({}).scope).toBeUndefined();
    expect(() => resolveConsoleOptions({ scope: 'all' as never })).toThrow(
      'McpConsoleModule: option "scope" must be a function (request) => \'all\' | { principalKeys: string[] }, got string.',
    );
  });
});

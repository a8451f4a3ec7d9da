import { Injectable, type CanActivate } from '@nestjs/common';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveConsoleExtras, resolveConsoleOptions } from './mcp-console.options';

@Injectable()
class AllowGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

describe('resolveConsoleOptions', () => {
  it('applies the defaults', () => {
    expect(resolveConsoleOptions(undefined)).toEqual({
      mount: null,
      pageSize: 50,
      idleTtlMs: 3_600_000,
      timeoutMs: 5000,
    });
    expect(resolveConsoleOptions({ mount: 'default', pageSize: 500, idleTtlMs: 1, timeoutMs: 250 })).toEqual({
      mount: 'default',
      pageSize: 500,
      idleTtlMs: 1,
      timeoutMs: 250,
    });
  });

  it('refuses values that cannot work, with the option named', () => {
    expect(() => resolveConsoleOptions('x' as never)).toThrow(McpConfigurationError);
    expect(() => resolveConsoleOptions({ pageSize: 501 })).toThrow(
      'McpConsoleModule: option "pageSize" must be a positive integer of at most 500.',
    );
    expect(() => resolveConsoleOptions({ pageSize: 0 })).toThrow(
      'McpConsoleModule: option "pageSize" must be a positive integer of at most 500.',
    );
    expect(() => resolveConsoleOptions({ pageSize: '10' as never })).toThrow(/"pageSize" must be a positive integer/);
    expect(() => resolveConsoleOptions({ idleTtlMs: 0 })).toThrow(
      'McpConsoleModule: option "idleTtlMs" must be a positive integer.',
    );
    expect(() => resolveConsoleOptions({ timeoutMs: Infinity })).toThrow(/"timeoutMs" must be a positive integer/);
    expect(() => resolveConsoleOptions({ timeoutMs: 2 ** 31 })).toThrow(
      'McpConsoleModule: option "timeoutMs" must be a positive integer of at most 2147483647.',
    );
    expect(() => resolveConsoleOptions({ mount: ' ' })).toThrow(/"mount" must be the name of a mount/);
    expect(() => resolveConsoleOptions({ scope: 'all' as never })).toThrow(
      `McpConsoleModule: option "scope" must be a function (request) => 'all' | { principalKeys: string[] }, got string.`,
    );
    expect(() => resolveConsoleOptions({ page: 1 } as never)).toThrow(
      /unknown option "page" \(did you mean "pageSize"\?/,
    );
  });
});

describe('resolveConsoleExtras', () => {
  it('normalizes the path and accepts guard classes and instances', () => {
    expect(resolveConsoleExtras({ guard: AllowGuard })).toEqual({ path: 'mcp-console', guards: [AllowGuard] });
    const instance = new AllowGuard();
    expect(resolveConsoleExtras({ path: '/admin/mcp/', guard: [AllowGuard, instance] })).toEqual({
      path: 'admin/mcp',
      guards: [AllowGuard, instance],
    });
  });

  it('refuses a missing guard, a guard that is not one, and a path that is not a URL path', () => {
    expect(() => resolveConsoleExtras({})).toThrow(/McpConsoleModule has no "guard" option/);
    expect(() => resolveConsoleExtras({ guard: null as never })).toThrow(/has no "guard" option/);
    expect(() => resolveConsoleExtras({ guard: [] })).toThrow(/has no "guard" option/);
    expect(() => resolveConsoleExtras({ guard: {} as never })).toThrow(
      'McpConsoleModule: option "guard" must be a CanActivate class or instance (or a list of them), got an object without canActivate().',
    );
    expect(() => resolveConsoleExtras({ guard: [AllowGuard, 'x' as never] })).toThrow(/got "x"/);
    for (const path of ['', '/', 'a b', 'a//b', 'a?b', 5 as never]) {
      expect(() => resolveConsoleExtras({ guard: AllowGuard, path })).toThrow(/option "path" must be a URL path/);
    }
  });
});

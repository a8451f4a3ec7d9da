import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { resolveMcpOptions } from '../config/mcp.options';
import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

const auth = () => 'alice';
const resolveShutdownOptions = (mount: string, shutdown: McpModuleOptions.Shutdown | undefined) =>
  resolveMcpOptions({ auth, advanced: { shutdown } }, { mount, path: '/mcp' }).shutdown;

describe('the shutdown option', () => {
  it('defaults to a 10 s drain, a 500 ms quiet period and Retry-After: 1', () => {
    expect(resolveShutdownOptions('m', undefined)).toEqual({
      drainTimeoutMs: 10_000,
      quietPeriodMs: 500,
      retryAfterMs: 1000,
    });
    expect(resolveShutdownOptions('m', { drainTimeoutMs: 2500, quietPeriodMs: 0, retryAfterMs: 5000 })).toEqual({
      drainTimeoutMs: 2500,
      quietPeriodMs: 0,
      retryAfterMs: 5000,
    });
  });

  it.each([
    [{ drainTimeoutMs: 0 }, 'option "advanced.shutdown.drainTimeoutMs" must be a positive integer'],
    [{ drainTimeoutMs: 1.5 }, 'option "advanced.shutdown.drainTimeoutMs" must be a positive integer'],
    [{ drainTimeoutMs: '10s' }, 'option "advanced.shutdown.drainTimeoutMs" must be a positive integer'],
    [{ quietPeriodMs: -1 }, 'option "advanced.shutdown.quietPeriodMs" must be an integer of 0 or more'],
    [{ retryAfterMs: 0 }, 'option "advanced.shutdown.retryAfterMs" must be a positive integer'],
    [{ drainTimeout: 100 }, 'unknown option "drainTimeout" (did you mean "drainTimeoutMs"?'],
    [10_000, 'option "advanced.shutdown" must be an object'],
  ])('refuses %p at boot', (value, message) => {
    expect(() => resolveShutdownOptions('m', value as never)).toThrow(McpConfigurationError);
    expect(() => resolveShutdownOptions('m', value as never)).toThrow(message);
  });
});

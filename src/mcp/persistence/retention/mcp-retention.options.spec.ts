import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { resolveClientRetention, resolveMountRetention } from './mcp-retention.options';

describe('retention options', () => {
  it('are off when absent', () => {
    expect(resolveMountRetention('default', undefined)).toBeNull();
    expect(resolveClientRetention(undefined)).toBeNull();
  });

  it('apply the defaults of the runner and keep what is not named', () => {
    expect(resolveMountRetention('default', { events: 1000 })).toEqual({
      events: 1000,
      sessions: null,
      tasks: 0,
      outboundSessions: null,
      intervalMs: 3_600_000,
      batchSize: 1000,
      batchPauseMs: 20,
    });
    expect(resolveClientRetention({ outboundSessions: 5, intervalMs: 7, batchSize: 3, batchPauseMs: 0 })).toEqual({
      events: null,
      sessions: null,
      tasks: null,
      outboundSessions: 5,
      intervalMs: 7,
      batchSize: 3,
      batchPauseMs: 0,
    });
  });

  it('turn the pruner on with only a task grace period, and accept a zero session horizon', () => {
    expect(resolveMountRetention('m', { tasks: 0 })).toMatchObject({ tasks: 0, events: null, sessions: null });
    expect(resolveMountRetention('m', { sessions: 0 })).toMatchObject({ sessions: 0 });
  });

  it.each([
    [
      { events: 0 },
      'McpModule (mount "m"): option "retention.events" must be a positive whole number of milliseconds.',
    ],
    [
      { tasks: -1 },
      'McpModule (mount "m"): option "retention.tasks" must be a whole number of milliseconds, 0 or more.',
    ],
    [
      { batchPauseMs: Number.NaN },
      'McpModule (mount "m"): option "retention.batchPauseMs" must be a whole number of milliseconds, 0 or more.',
    ],
    [{ batchSize: 50_001 }, 'McpModule (mount "m"): option "retention.batchSize" must be at most 50000.'],
    [[1], 'McpModule (mount "m"): option "retention" must be an object such as { events: 2592000000 }.'],
  ])('refuse %j on a mount', (raw, message) => {
    expect(() => resolveMountRetention('m', raw)).toThrow(new McpConfigurationError(message));
  });

  it('refuse the keys of the other module', () => {
    expect(() => resolveMountRetention('m', { outboundSessions: 1 })).toThrow(McpConfigurationError);
    expect(() => resolveClientRetention({ sessions: 1 })).toThrow(McpConfigurationError);
    expect(() => resolveClientRetention({ events: 2.5 })).toThrow(
      'McpClientModule option "retention.events" must be a positive whole number of milliseconds.',
    );
  });
});

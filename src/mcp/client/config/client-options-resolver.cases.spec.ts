import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpClientOptions } from '../interfaces/mcp-client-options.interface';
import { resolveClientOptions } from './client-options-resolver';

describe('resolveClientOptions, limits and names', () => {
  it('applies the defaults when no options are given at all', () => {
    expect(resolveClientOptions(undefined)).toMatchObject({ servers: {}, defaultTimeoutMs: 60_000, maxInputRounds: 8 });
  });

  it.each<[string, McpClientOptions, string]>([
    ['an empty queue name', { queue: { name: '' } }, 'McpClientModule option "queue.name" must be a non-empty string.'],
    [
      'a queue name that is not a string',
      { queue: { name: 7 as never } },
      'McpClientModule option "queue.name" must be a non-empty string.',
    ],
    [
      'a negative backoffMs',
      { queue: { backoffMs: -1 } },
      'McpClientModule option "queue.backoffMs" must be an integer >= 0.',
    ],
    [
      'a zero attempts',
      { queue: { attempts: 0 } },
      'McpClientModule option "queue.attempts" must be a positive integer.',
    ],
    [
      'a negative markReplicas',
      { queue: { markReplicas: -1 } },
      'McpClientModule option "queue.markReplicas" must be an integer >= 0.',
    ],
    [
      'a fractional markReplicas',
      { queue: { markReplicas: 1.5 } },
      'McpClientModule option "queue.markReplicas" must be an integer >= 0.',
    ],
    [
      'a markReplicas that is not a number',
      { queue: { markReplicas: '1' as never } },
      'McpClientModule option "queue.markReplicas" must be an integer >= 0.',
    ],
    [
      'a fractional maxInputRounds',
      { advanced: { maxInputRounds: 1.5 } },
      'McpClientModule option "advanced.maxInputRounds" must be a positive integer.',
    ],
  ])('refuses %s, saying what it must be', (_case, options, message) => {
    expect(() => resolveClientOptions(options)).toThrow(new McpConfigurationError(message));
  });

  it('takes markReplicas as given (0 included), and leaves it to the connection when absent', () => {
    expect(resolveClientOptions({ redis: 'redis://127.0.0.1:6379', queue: { markReplicas: 0 } }).queue).toMatchObject({
      markReplicas: 0,
    });
    expect(resolveClientOptions({ redis: 'redis://127.0.0.1:6379', queue: { markReplicas: 2 } }).queue).toMatchObject({
      markReplicas: 2,
    });
    // The Bull queue decides by its connection (defaultMarkReplicas): 'auto' on Sentinel or a Cluster, else 0.
    expect(resolveClientOptions({ redis: 'redis://127.0.0.1:6379' }).queue).not.toHaveProperty('markReplicas');
  });

  it('accepts a zero backoff', () => {
    expect(resolveClientOptions({ queue: { backoffMs: 0, name: 'calls' } }).queue).toMatchObject({
      backoffMs: 0,
      name: 'calls',
    });
  });
});

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
      'a fractional maxInputRounds',
      { advanced: { maxInputRounds: 1.5 } },
      'McpClientModule option "advanced.maxInputRounds" must be a positive integer.',
    ],
  ])('refuses %s, saying what it must be', (_case, options, message) => {
    expect(() => resolveClientOptions(options)).toThrow(new McpConfigurationError(message));
  });

  it('accepts a zero backoff', () => {
    expect(resolveClientOptions({ queue: { backoffMs: 0, name: 'calls' } }).queue).toMatchObject({
      backoffMs: 0,
      name: 'calls',
    });
  });
});

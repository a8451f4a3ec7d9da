import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type OptionsModel } from './options-model';

const MODEL = {
  count: { kind: 'integer', type: 'number', description: 'A count.', default: 3 },
  pauseMs: { kind: 'integer', type: 'number', description: 'A pause.', default: 0, minimum: 0, unit: 'ms' },
  mode: { kind: 'enum', type: "'a' | 'b'", description: 'A mode.', values: ['a', 'b'], default: 'a' },
  cache: {
    kind: 'group',
    type: 'boolean | Cache',
    description: 'A cache.',
    orBoolean: true,
    options: { ttlMs: { kind: 'integer', type: 'number', description: 'A ttl.', default: 1000, maximum: 5000 } },
  },
  hook: { kind: 'custom', type: 'Hook', description: 'A hook.', validator: 'hook' },
} as const satisfies OptionsModel;

const context: OptionsContext = {
  where: 'Spec',
  invalid: (option, expected) => `Spec option "${option}" must be ${expected}.`,
  nonNegativeInteger: 'an integer of 0 or more',
  validators: { hook: ({ value }) => (value === undefined ? 'none' : `hooked ${JSON.stringify(value)}`) },
};

describe('resolveOptions', () => {
  it('applies the defaults of every level and runs the custom validators', () => {
    expect(resolveOptions(MODEL, undefined, context)).toEqual({
      count: 3,
      pauseMs: 0,
      mode: 'a',
      cache: { ttlMs: 1000 },
      hook: 'none',
    });
    expect(resolveOptions(MODEL, { cache: false, hook: 1, mode: 'b' }, context)).toMatchObject({
      cache: false,
      hook: 'hooked 1',
      mode: 'b',
    });
    expect(resolveOptions(MODEL, { cache: true }, context)).toMatchObject({ cache: { ttlMs: 1000 } });
  });

  it.each([
    [{ count: 0 }, 'Spec option "count" must be a positive integer.'],
    [{ pauseMs: -1 }, 'Spec option "pauseMs" must be an integer of 0 or more.'],
    [{ mode: 'c' }, `Spec option "mode" must be 'a' or 'b'.`],
    [{ cache: 'yes' }, 'Spec option "cache" must be true, false or { ttlMs? }.'],
    [{ cache: { ttlMs: 5001 } }, 'Spec option "cache.ttlMs" must be a positive integer of at most 5000.'],
    [{ cache: { ttl: 1 } }, 'Spec option "cache": unknown option "ttl" (did you mean "ttlMs"? known: ttlMs)'],
    [{ pause: 1 }, 'Spec: unknown option "pause" (did you mean "pauseMs"? known: count, pauseMs, mode, cache, hook)'],
  ])('refuses %j, saying what the option accepts', (input, message) => {
    expect(() => resolveOptions(MODEL, input, context)).toThrow(new McpConfigurationError(message));
  });
});

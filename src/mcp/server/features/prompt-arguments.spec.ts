import 'reflect-metadata';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { compilePromptArguments } from './prompt-arguments';

class SummaryArgs {
  @IsString()
  topic: string;

  @IsOptional()
  @IsIn(['short', 'long'])
  length?: string;
}

describe('compilePromptArguments with a list', () => {
  const spec = compilePromptArguments([
    { name: 'code', description: 'The code', required: true },
    { name: 'language' },
  ]);

  it('publishes the list as declared', () => {
    expect(spec.arguments).toEqual([{ name: 'code', description: 'The code', required: true }, { name: 'language' }]);
  });

  it('accepts the required arguments with or without optional ones, and extra ones', async () => {
    expect(await spec.validate({ code: 'x' })).toEqual({ ok: true, value: { code: 'x' } });
    expect(await spec.validate({ code: 'x', language: 'go', extra: 'kept' })).toEqual({
      ok: true,
      value: { code: 'x', language: 'go', extra: 'kept' },
    });
  });

  it.each([
    ['no arguments at all', undefined],
    ['an empty object', {}],
    ['only the optional one', { language: 'go' }],
  ])('rejects %s, naming the missing argument', async (_label, args) => {
    expect(await spec.validate(args)).toEqual({ ok: false, message: 'missing required argument: code' });
  });

  it('names every missing argument', async () => {
    const both = compilePromptArguments([
      { name: 'a', required: true },
      { name: 'b', required: true },
    ]);
    expect(await both.validate({})).toEqual({ ok: false, message: 'missing required arguments: a, b' });
  });

  it('rejects values that are not strings and arguments that are not an object', async () => {
    expect(await spec.validate({ code: 3 })).toEqual({ ok: false, message: 'argument values must be strings (code)' });
    expect(await spec.validate(['x'])).toEqual({ ok: false, message: 'arguments must be an object of strings' });
    expect(await spec.validate('x')).toEqual({ ok: false, message: 'arguments must be an object of strings' });
  });

  it('treats a prompt without arguments as accepting none or any', async () => {
    const none = compilePromptArguments(undefined);
    expect(none.arguments).toEqual([]);
    expect(await none.validate(undefined)).toEqual({ ok: true, value: {} });
  });
});

describe('compilePromptArguments with a DTO', () => {
  const spec = compilePromptArguments(SummaryArgs);

  it('publishes one argument per property, required unless optional', () => {
    expect(spec.arguments).toEqual([
      { name: 'topic', required: true },
      { name: 'length', required: false },
    ]);
  });

  it('hands the handler a DTO instance without unknown properties', async () => {
    const outcome = await spec.validate({ topic: 'tides', length: 'short', extra: 'x' });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.value).toBeInstanceOf(SummaryArgs);
    expect({ ...(outcome.value as object) }).toEqual({ topic: 'tides', length: 'short' });
  });

  it('reports a missing required argument before the DTO rules, and then the DTO rules', async () => {
    expect(await spec.validate({ length: 'short' })).toEqual({
      ok: false,
      message: 'missing required argument: topic',
    });
    const outcome = await spec.validate({ topic: 'tides', length: 'medium' });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.message).toMatch(/^length: /);
  });
});

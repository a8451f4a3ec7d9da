import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { Exclude, Expose, plainToInstance, Transform, Type as TransformType } from 'class-transformer';
import {
  Allow,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  validate,
  ValidateIf,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { compileDtoFastPath } from './dto-fast-path';

class Echo {
  @IsString()
  @MaxLength(5)
  text: string;
}

class WithDefaults {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  steps?: number = 3;

  /** Not validated: `whitelist` strips it from the instance even though the constructor set it. */
  internal = 'kept out';

  @IsOptional()
  @IsString()
  note?: string;
}

/** A `registerDecorator` validator that reads another property through `args.object`. */
function SameAs(other: string) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'sameAs',
      target: target.constructor,
      propertyName,
      constraints: [other],
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          value === (args.object as Record<string, unknown>)[args.constraints[0] as string],
      },
    });
}

class Confirm {
  @IsString()
  password: string;

  @SameAs('password')
  repeat: string;
}

class Conditional {
  @IsIn(['a', 'b'])
  kind: string;

  @ValidateIf((o: Conditional) => o.kind === 'b')
  @IsString()
  detail?: string;

  @IsDefined()
  @Allow()
  anything: unknown;
}

class Parent {
  @IsNumber()
  a: number;
}

class Child extends Parent {
  @IsNumber({}, { each: true })
  b: number;
}

class Inner {
  @IsString()
  name: string;
}

class Nested {
  @ValidateNested()
  @TransformType(() => Inner)
  inner: Inner;
}

class Transformed {
  @Transform(({ value }) => String(value).trim())
  @IsString()
  text: string;
}

class WithGetter {
  @IsString()
  get text(): string {
    return 'fixed';
  }
}

@Exclude()
class ExcludedClass {
  @Expose()
  @IsString()
  text: string;
}

class AsyncCheck {
  @IsString()
  text: string;

  static calls = 0;
}
registerDecorator({
  name: 'eventually',
  target: AsyncCheck,
  propertyName: 'text',
  validator: {
    validate: async (value: unknown) => {
      AsyncCheck.calls++;
      await Promise.resolve();
      return typeof value === 'string';
    },
  },
});

/** The full path the shortcut stands in for. */
async function fullPath(dto: Type<unknown>, value: object): Promise<{ ok: boolean; instance: object }> {
  const instance = plainToInstance(dto, value) as object;
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
  return { ok: errors.length === 0, instance };
}

const ABSENT = Symbol('absent');

/**
 * Every combination of the DTO's keys over a pool of values (a key may be absent), then the
 * valid input with keys no property should take (an unknown one, `constructor`, `__proto__`).
 */
function* inputs(keys: string[], valid: Record<string, unknown>): Generator<Record<string, unknown>> {
  const pool: unknown[] = [
    ABSENT,
    'abc',
    'abcdef',
    '😀😀😀',
    '',
    'a',
    'b',
    'p',
    0,
    1,
    7,
    11,
    2.5,
    Number.NaN,
    true,
    null,
    { name: 'x' },
    ['x'],
  ];
  const choice = new Array<number>(keys.length).fill(0);
  for (;;) {
    const value: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      if (pool[choice[i]] !== ABSENT) value[key] = pool[choice[i]];
    });
    yield value;
    let i = 0;
    while (i < keys.length && ++choice[i] === pool.length) choice[i++] = 0;
    if (i === keys.length) break;
  }
  yield { ...valid, extra: 1 };
  yield { ...valid, constructor: 'x' };
  yield JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`) as Record<string, unknown>;
}

const ELIGIBLE: Array<[string, Type<unknown>, string[], Record<string, unknown>]> = [
  ['Echo', Echo, ['text'], { text: 'hi' }],
  ['WithDefaults', WithDefaults, ['steps', 'note'], { note: 'n' }],
  ['Confirm', Confirm, ['password', 'repeat'], { password: 'p', repeat: 'p' }],
  ['Conditional', Conditional, ['kind', 'detail', 'anything'], { kind: 'a', anything: 1 }],
  ['Child', Child, ['a', 'b'], { a: 1, b: 2 }],
];

describe('compileDtoFastPath', () => {
  it.each(ELIGIBLE)(
    '%s: agrees with plainToInstance + validate on every generated input, and answers the common call itself',
    async (_name, dto, keys, valid) => {
      const fast = compileDtoFastPath(dto);
      expect(fast).not.toBeNull();
      const shortcut = fast as NonNullable<typeof fast>;
      let answered = 0;
      for (const value of [valid, ...inputs(keys, valid)]) {
        const instance = shortcut(value);
        if (instance === null) continue;
        answered++;
        const full = await fullPath(dto, value);
        // The shortcut never accepts what the full path refuses, and builds the same instance.
        expect({ value, ok: full.ok }).toEqual({ value, ok: true });
        expect(Object.getPrototypeOf(instance)).toBe(dto.prototype);
        expect(Object.keys(instance)).toEqual(Object.keys(full.instance));
        expect(instance).toEqual(full.instance);
      }
      expect(shortcut(valid)).not.toBeNull();
      expect(answered).toBeGreaterThan(1);
    },
  );

  it('keeps the constructor defaults of validated properties and strips the unvalidated ones', () => {
    const instance = compileDtoFastPath(WithDefaults)?.({ note: 'n' });
    expect(instance).toBeInstanceOf(WithDefaults);
    expect({ ...instance }).toEqual({ steps: 3, note: 'n' });
  });

  it('runs the validators class-validator registered, with the instance as args.object (a cross-field check)', () => {
    const fast = compileDtoFastPath(Confirm) as NonNullable<ReturnType<typeof compileDtoFastPath>>;
    expect(fast({ password: 'p', repeat: 'p' })).toEqual(Object.assign(new Confirm(), { password: 'p', repeat: 'p' }));
    expect(fast({ password: 'p', repeat: 'q' })).toBeNull();
  });

  it('leaves to the full path what it does not cover: an extra key, a nested value, a failing value', () => {
    const fast = compileDtoFastPath(Echo) as NonNullable<ReturnType<typeof compileDtoFastPath>>;
    expect(fast({ text: 'hi', extra: 1 })).toBeNull();
    expect(fast({ text: ['hi'] })).toBeNull();
    expect(fast({ text: 'too long' })).toBeNull();
    expect(fast({})).toBeNull();
  });

  it('leaves an async validator to the full path, which awaits it', async () => {
    const fast = compileDtoFastPath(AsyncCheck) as NonNullable<ReturnType<typeof compileDtoFastPath>>;
    expect(fast({ text: 'hi' })).toBeNull();
    await expect(fullPath(AsyncCheck, { text: 'hi' })).resolves.toMatchObject({ ok: true });
  });

  it.each([
    ['a nested DTO (@ValidateNested, @Type)', Nested],
    ['a class-transformer @Transform', Transformed],
    ['an accessor on the prototype', WithGetter],
    ['class-level @Exclude / @Expose', ExcludedClass],
    ['a class without validation metadata', class Plain {}],
  ])('is not made for %s', (_what, dto) => {
    expect(compileDtoFastPath(dto)).toBeNull();
  });
});

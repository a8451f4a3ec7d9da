import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { compileJsonSchema, type ValidationOutcome } from './json-schema-validator';
import { compileInputValidator } from './tool-schema.factory';
import {
  MAX_ERROR_CHARS,
  MAX_LISTED_ERRORS,
  MAX_VALUES_FOR_ALL_ERRORS,
  holdsAtMost,
  validationMessage,
} from './validation-report';

function failure(outcome: ValidationOutcome | Promise<ValidationOutcome>): string {
  const settled = outcome as ValidationOutcome;
  if (settled.ok) throw new Error('expected a failure');
  return settled.message;
}

/** The longest message a failure may have: every listed error at its cap, the separators and the tail. */
const MESSAGE_BOUND = MAX_LISTED_ERRORS * (MAX_ERROR_CHARS + 2) + 200;

const stringItems = { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } };

class Line {
  @IsString()
  sku: string;
}

class Order {
  @ValidateNested({ each: true })
  @Type(() => Line)
  lines: Line[];
}

describe('bounded validation messages', () => {
  it('lists every error of a small value when there are few', () => {
    const validate = compileJsonSchema(stringItems);
    expect(failure(validate({ items: ['a', 1, 2] }))).toBe('items.1: must be string; items.2: must be string');
  });

  it(`lists ${MAX_LISTED_ERRORS} errors of a small value and counts the rest`, () => {
    const validate = compileJsonSchema(stringItems);
    const message = failure(validate({ items: new Array(50).fill(1) }));
    expect(message.split('; ')).toHaveLength(MAX_LISTED_ERRORS);
    expect(message).toMatch(/^items\.0: must be string; items\.1: must be string;/);
    expect(message).toMatch(/\(10 of 50 errors listed\)$/);
  });

  it('reports the first error of a value too large to look for all of them, and says so', () => {
    const validate = compileJsonSchema(stringItems);
    const message = failure(validate({ items: new Array(1_000_000).fill(1) }));
    expect(message).toBe(
      `items.0: must be string; further errors were not looked for (the value holds more than ${MAX_VALUES_FOR_ALL_ERRORS} values)`,
    );
  });

  it('cuts an error naming a huge property to its bound', () => {
    const validate = compileJsonSchema({ type: 'object', additionalProperties: false });
    const message = failure(validate({ ['k'.repeat(100_000)]: 1 }));
    expect(message.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect(message).toMatch(/^\(root\): must NOT have additional properties 'kkk+…$/);
  });

  it('accepts a large valid value', () => {
    const validate = compileJsonSchema(stringItems);
    const value = { items: new Array(100_000).fill('a') };
    expect(validate(value)).toEqual({ ok: true, value });
  });

  it('bounds the message of a DTO (class-validator) tool too, with the count', async () => {
    const validate = compileInputValidator(Order);
    const message = failure(await validate({ lines: Array.from({ length: 5000 }, () => ({ sku: 1 })) }));
    expect(message.length).toBeLessThan(MESSAGE_BOUND);
    expect(message).toMatch(/^lines\.0\.sku: sku must be a string; lines\.1\.sku: sku must be a string;/);
    expect(message).toMatch(/\(10 of 5000 errors listed\)$/);
  });

  it('counts a value without walking past the bound', () => {
    expect(holdsAtMost({ a: [1, 2, { b: 3 }] }, 6)).toBe(true);
    expect(holdsAtMost({ a: [1, 2, { b: 3 }] }, 5)).toBe(false);
    expect(holdsAtMost(new Array(10_000_000), 1000)).toBe(false);
    expect(holdsAtMost('text', 1)).toBe(true);
  });

  it('names how many errors there were when it lists only some', () => {
    expect(validationMessage(['a', 'b'])).toBe('a; b');
    expect(validationMessage(Array.from({ length: 11 }, (_, i) => `e${i}`))).toMatch(
      /; e9 \(10 of 11 errors listed\)$/,
    );
    expect(validationMessage(['x'.repeat(500)])).toHaveLength(MAX_ERROR_CHARS);
  });
});

import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsArray, IsEnum, IsInt, IsNumber, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { compileJsonSchema, type ValidationOutcome } from './json-schema-validator';
import {
  EMPTY_INPUT_SCHEMA,
  compileInputValidator,
  dtoToJsonSchema,
  isDtoClass,
  toPublishedSchema,
} from './tool-schema.factory';

enum Priority {
  Low = 'low',
  High = 'high',
}

class GeoPoint {
  @IsNumber()
  lat: number;

  @IsNumber()
  lng: number;
}

class ShippingAddress {
  @IsString()
  street: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => GeoPoint)
  location?: GeoPoint;
}

class CreateOrderInput {
  @IsString()
  customer: string;

  @IsNumber()
  amount: number;

  @IsOptional()
  @IsString()
  note?: string;

  @IsInt()
  @Min(1)
  @Max(10)
  quantity: number;

  @IsEnum(Priority)
  priority: Priority;

  @IsArray()
  @IsString({ each: true })
  tags: string[];

  @ValidateNested()
  @Type(() => ShippingAddress)
  shipTo: ShippingAddress;
}

class EmptyInput {}

const validOrder = {
  customer: 'ACME',
  amount: 12.5,
  quantity: 3,
  priority: 'high',
  tags: ['rush'],
  shipTo: { street: '1 Main St', location: { lat: 1, lng: 2 } },
};

async function run(validator: ReturnType<typeof compileInputValidator>, value: unknown): Promise<ValidationOutcome> {
  return validator(value);
}

describe('dtoToJsonSchema', () => {
  const schema = dtoToJsonSchema(CreateOrderInput);

  it('publishes an object schema with one property per decorated field and the right types', () => {
    expect(schema.type).toBe('object');
    expect(schema.properties).toEqual({
      customer: { type: 'string' },
      amount: { type: 'number' },
      note: { type: 'string' },
      quantity: { type: 'integer', minimum: 1, maximum: 10 },
      priority: { type: 'string', enum: ['low', 'high'] },
      tags: { type: 'array', items: { type: 'string' } },
      shipTo: { $ref: '#/$defs/ShippingAddress' },
    });
  });

  it('lists every non-optional field as required, and no optional one', () => {
    expect([...(schema.required as string[])].sort()).toEqual([
      'amount',
      'customer',
      'priority',
      'quantity',
      'shipTo',
      'tags',
    ]);
    expect(schema.required).not.toContain('note');
  });

  it('puts nested DTOs (transitively) under $defs', () => {
    const defs = schema.$defs as Record<string, Record<string, unknown>>;
    expect(Object.keys(defs).sort()).toEqual(['GeoPoint', 'ShippingAddress']);
    expect(defs.ShippingAddress).toMatchObject({
      type: 'object',
      properties: { street: { type: 'string' }, location: { $ref: '#/$defs/GeoPoint' } },
      required: ['street'],
    });
    expect(defs.GeoPoint).toMatchObject({
      type: 'object',
      properties: { lat: { type: 'number' }, lng: { type: 'number' } },
    });
  });

  it('does not drag unrelated DTOs into $defs', () => {
    expect(dtoToJsonSchema(GeoPoint).$defs).toBeUndefined();
    expect(Object.keys(dtoToJsonSchema(ShippingAddress).$defs as object)).toEqual(['GeoPoint']);
  });

  it('is a self-contained JSON Schema 2020-12 whose $refs resolve', () => {
    const validate = compileJsonSchema(schema);
    expect(validate(validOrder)).toEqual({ ok: true, value: validOrder });
    const badNested = { ...validOrder, shipTo: { street: 1, location: { lat: 'north', lng: 2 } } };
    const outcome = validate(badNested) as ValidationOutcome;
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.message).toContain('shipTo.street');
    expect(outcome.ok === false && outcome.message).toContain('shipTo.location.lat');
  });

  it('defines a nested class without validation decorators as any object, so its $refs resolve', async () => {
    class Undecorated {
      note: string;
    }
    class Holder {
      @ValidateNested()
      @Type(() => Undecorated)
      inner: Undecorated;

      @IsArray()
      @ValidateNested({ each: true })
      @Type(() => Undecorated)
      many: Undecorated[];
    }
    const published = dtoToJsonSchema(Holder);
    expect(published.$defs).toEqual({ Undecorated: { type: 'object' } });
    expect(published.properties).toMatchObject({
      inner: { $ref: '#/$defs/Undecorated' },
      many: { type: 'array', items: { $ref: '#/$defs/Undecorated' } },
    });
    const validateSchema = compileJsonSchema(published);
    const good = { inner: { note: 'kept by the schema' }, many: [{ anything: 1 }] };
    expect(validateSchema(good)).toEqual({ ok: true, value: good });
    const bad = validateSchema({ inner: 'not an object', many: [] }) as ValidationOutcome;
    expect(bad.ok).toBe(false);
    expect(bad.ok === false && bad.message).toContain('inner');
    // The server's own validation agrees: any object is accepted there.
    const validateDto = compileInputValidator(Holder);
    const outcome = (await validateDto({ inner: { note: 'x' }, many: [{}] })) as ValidationOutcome;
    expect(outcome.ok).toBe(true);
    expect(outcome.ok && outcome.value).toBeInstanceOf(Holder);
  });

  it('gives a DTO without decorated fields an empty object schema', () => {
    expect(dtoToJsonSchema(EmptyInput)).toEqual({ type: 'object', properties: {} });
  });

  it('derives a separate schema for two DTO classes that happen to share a class name', () => {
    const makeFirst = () => {
      class Payload {
        @IsString()
        title: string;
      }
      return Payload;
    };
    const makeSecond = () => {
      class Payload {
        @IsInt()
        count: number;
      }
      return Payload;
    };
    const First = makeFirst();
    const Second = makeSecond();
    expect(dtoToJsonSchema(First).properties).toEqual({ title: { type: 'string' } });
    expect(dtoToJsonSchema(Second).properties).toEqual({ count: { type: 'integer' } });
  });

  it('refuses at boot a DTO that nests a class whose name another validated class shares', () => {
    const makeLine = (field: 'sku' | 'qty') => {
      class Line {
        @IsString()
        sku: string;
      }
      class QtyLine {
        @IsInt()
        qty: number;
      }
      Object.defineProperty(QtyLine, 'name', { value: 'Line' });
      return field === 'sku' ? Line : QtyLine;
    };
    const Line = makeLine('sku');
    makeLine('qty');
    class Basket {
      @ValidateNested({ each: true })
      @Type(() => Line)
      @IsArray()
      lines: InstanceType<typeof Line>[];
    }
    expect(() => dtoToJsonSchema(Basket)).toThrow(McpConfigurationError);
    expect(() => dtoToJsonSchema(Basket)).toThrow(
      'The DTO Basket nests a class named Line, and more than one validated class has that name: rename one of them so its JSON Schema is unambiguous.',
    );
  });
});

describe('toPublishedSchema / isDtoClass', () => {
  it('publishes a closed empty object schema for a tool without input', () => {
    expect(toPublishedSchema(undefined)).toEqual({ type: 'object', additionalProperties: false });
    expect(toPublishedSchema(undefined)).toBe(EMPTY_INPUT_SCHEMA);
  });

  it('publishes a raw JSON Schema as given and a DTO as its derived schema', () => {
    const raw = { type: 'object', properties: { q: { type: 'string' } } };
    expect(toPublishedSchema(raw)).toBe(raw);
    expect(toPublishedSchema(CreateOrderInput)).toEqual(dtoToJsonSchema(CreateOrderInput));
  });

  it('tells DTO classes from schema objects', () => {
    expect(isDtoClass(CreateOrderInput)).toBe(true);
    expect(isDtoClass({ type: 'object' })).toBe(false);
  });
});

describe('compileInputValidator with a DTO', () => {
  const validate = compileInputValidator(CreateOrderInput);

  it('returns an instance of the DTO, with nested DTO instances', async () => {
    const outcome = await run(validate, validOrder);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.value).toBeInstanceOf(CreateOrderInput);
    const order = outcome.value as CreateOrderInput;
    expect(order.shipTo).toBeInstanceOf(ShippingAddress);
    expect(order.shipTo.location).toBeInstanceOf(GeoPoint);
    expect({ ...order, shipTo: { ...order.shipTo, location: { ...order.shipTo.location } } }).toEqual(validOrder);
  });

  it('strips unknown properties, at the top level and in nested DTOs', async () => {
    const outcome = await run(validate, { ...validOrder, isAdmin: true, shipTo: { ...validOrder.shipTo, hack: 'x' } });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const order = outcome.value as Record<string, unknown>;
    expect(order).not.toHaveProperty('isAdmin');
    expect(order.shipTo).not.toHaveProperty('hack');
    expect(order.customer).toBe('ACME');
  });

  it('accepts a missing optional property', async () => {
    const { note: _note, ...rest } = { ...validOrder, note: 'x' };
    expect((await run(validate, rest)).ok).toBe(true);
  });

  it.each([
    ['a wrong type', { customer: 42 }, 'customer'],
    ['a missing required property', { amount: undefined }, 'amount'],
    ['a value above Max', { quantity: 11 }, 'quantity'],
    ['a value below Min', { quantity: 0 }, 'quantity'],
    ['a fractional integer', { quantity: 2.5 }, 'quantity'],
    ['a value outside the enum', { priority: 'urgent' }, 'priority'],
    ['a non-array', { tags: 'rush' }, 'tags'],
    ['a non-string array item', { tags: ['ok', 3] }, 'tags'],
  ])('rejects %s, naming the property', async (_label, patch, property) => {
    const outcome = await run(validate, { ...validOrder, ...patch });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.message).toMatch(new RegExp(`(^|; )${property}: `));
  });

  it('names the path of an invalid nested property', async () => {
    const outcome = await run(validate, { ...validOrder, shipTo: { street: 7, location: { lat: 1, lng: 'east' } } });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message).toContain('shipTo.street: ');
    expect(outcome.message).toContain('shipTo.location.lng: ');
  });

  it.each([
    ['null', null],
    ['an array', [validOrder]],
    ['a string', 'order'],
    ['a number', 5],
  ])('rejects %s as arguments', async (_label, value) => {
    const outcome = await run(validate, value);
    expect(outcome).toEqual({ ok: false, message: '(root): must be an object' });
  });
});

describe('compileInputValidator without input', () => {
  it('passes the arguments through and turns missing ones into {}', async () => {
    const validate = compileInputValidator(undefined);
    expect(await validate(undefined)).toEqual({ ok: true, value: {} });
    expect(await validate({ a: 1 })).toEqual({ ok: true, value: { a: 1 } });
  });
});

describe('compileInputValidator with a raw JSON Schema (Ajv)', () => {
  it('validates with JSON Schema 2020-12 by default (prefixItems, $defs)', async () => {
    const validate = compileInputValidator({
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/n' }] } },
      required: ['pair'],
      $defs: { n: { type: 'number' } },
    });
    expect(await validate({ pair: ['a', 1] })).toEqual({ ok: true, value: { pair: ['a', 1] } });
    const outcome = await validate({ pair: [1, 'a'] });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.message).toContain('pair.0');
  });

  it('validates with draft-07 when $schema says so (items as a tuple)', async () => {
    const validate = compileInputValidator({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
      definitions: { unused: { type: 'string' } },
    });
    expect((await validate({ pair: ['a', 1] })).ok).toBe(true);
    const outcome = await validate({ pair: [1, 'a'] });
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.message).toContain('pair.0');
  });

  it('accepts a schema that names the 2020-12 dialect explicitly', async () => {
    const validate = compileInputValidator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    expect((await validate({ a: 'x' })).ok).toBe(true);
    expect((await validate({ a: 1 })).ok).toBe(false);
  });

  it('checks formats such as email, date-time and uri', async () => {
    const validate = compileInputValidator({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        at: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
      },
    });
    expect(
      (await validate({ email: 'alice@example.com', at: '2025-11-25T10:00:00Z', site: 'https://example.com/x' })).ok,
    ).toBe(true);
    const outcome = await validate({ email: 'not-an-email', at: 'yesterday', site: 'no scheme' });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message).toContain('email: must match format "email"');
    expect(outcome.message).toContain('at: must match format "date-time"');
    expect(outcome.message).toContain('site: must match format "uri"');
  });

  it('reports every problem at once, naming missing and extra properties', async () => {
    const validate = compileInputValidator({
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
      required: ['city'],
      additionalProperties: false,
    });
    const outcome = await validate({ days: 0, color: 'red' });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message).toContain("must have required property 'city'");
    expect(outcome.message).toContain('days: must be >= 1');
    expect(outcome.message).toContain("must NOT have additional properties 'color'");
  });

  it('throws when the schema itself is invalid', () => {
    expect(() => compileInputValidator({ type: 'object', properties: { a: { type: 'strng' } } })).toThrow(
      new Error(
        'schema is invalid: data/properties/a/type must be equal to one of the allowed values, data/properties/a/type must be array, data/properties/a/type must match a schema in anyOf',
      ),
    );
  });
});

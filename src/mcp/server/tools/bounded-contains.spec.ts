import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { boundedContains } from './bounded-contains';

function bounded<T extends Ajv>(ajv: T): T {
  ajv.removeKeyword('contains');
  ajv.addKeyword(boundedContains);
  return ajv;
}

const schemas: [string, object][] = [
  ['contains', { type: 'array', contains: { type: 'string' } }],
  ['minContains 2', { type: 'array', contains: { type: 'string' }, minContains: 2 }],
  ['maxContains 1', { type: 'array', contains: { type: 'string' }, maxContains: 1 }],
  ['minContains 0, maxContains 1', { type: 'array', contains: { type: 'string' }, minContains: 0, maxContains: 1 }],
  ['minContains 0', { type: 'array', contains: { type: 'string' }, minContains: 0 }],
  ['minContains over maxContains', { type: 'array', contains: { type: 'string' }, minContains: 3, maxContains: 1 }],
  ['contains: true', { type: 'array', contains: true }],
  ['contains: false', { type: 'array', contains: false }],
  [
    'contains beside items',
    { type: 'array', items: { type: ['string', 'number'] }, contains: { type: 'string', minLength: 2 } },
  ],
  [
    'contains under anyOf',
    {
      anyOf: [
        { type: 'array', contains: { const: 1 } },
        { type: 'array', contains: { const: 2 } },
      ],
    },
  ],
  [
    'contains with unevaluatedItems',
    { type: 'array', prefixItems: [{ type: 'number' }], contains: { type: 'string' }, unevaluatedItems: false },
  ],
  [
    'nested contains',
    { type: 'object', properties: { a: { type: 'array', contains: { type: 'array', contains: { const: 'x' } } } } },
  ],
];

const values: unknown[] = [
  [],
  [1],
  ['a'],
  [1, 'a'],
  ['a', 'b'],
  ['a', 'b', 'c'],
  [1, 2, 3],
  ['ab', 1, 'c'],
  [1, 'x', 'y'],
  [2, 3, 1],
  { a: [[1], ['x']] },
  { a: [[1], [2]] },
  'not an array',
];

describe('boundedContains', () => {
  describe.each([
    ['2020-12', () => new Ajv2020({ strict: false })],
    ['2020-12, allErrors', () => new Ajv2020({ strict: false, allErrors: true })],
    ['draft-07', () => new Ajv({ strict: false })],
    ['draft-07, allErrors', () => new Ajv({ strict: false, allErrors: true })],
  ])('%s', (_label, make) => {
    const stock = make();
    const ours = bounded(make());

    it.each(schemas)('%s: the same verdict as Ajv, and the same errors but the non-matching items', (_name, schema) => {
      const expected = stock.compile(schema);
      const actual = ours.compile(schema);
      for (const value of values) {
        expect([value, actual(value)]).toEqual([value, expected(value)]);
        const withoutItemErrors = (expected.errors ?? []).filter((e) => !e.schemaPath.includes('/contains/'));
        expect([value, actual.errors ?? []]).toEqual([value, withoutItemErrors]);
      }
    });
  });

  it('keeps no error per item of a long array that never matches', () => {
    const validate = bounded(new Ajv2020({ strict: false, allErrors: true })).compile({
      type: 'array',
      contains: { type: 'string' },
    });
    expect(validate(new Array(100_000).fill(1))).toBe(false);
    expect(validate.errors).toEqual([
      expect.objectContaining({ keyword: 'contains', message: 'must contain at least 1 valid item(s)' }),
    ]);
  });
});

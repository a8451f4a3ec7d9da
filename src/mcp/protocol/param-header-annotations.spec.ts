import { findParamAnnotations, type ParamAnnotationRules } from './param-header-annotations';

const STRICT: ParamAnnotationRules = { typeArrays: false, dataKeywords: new Set() };
const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });
const verdicts = (input: unknown, rules: ParamAnnotationRules = STRICT) =>
  findParamAnnotations(input, rules).map(
    ({ path, location, name, reachable, tokenName, type, duplicateOf, valid }) => ({
      path,
      location,
      name,
      reachable,
      tokenName,
      type,
      duplicateOf: duplicateOf?.path ?? null,
      valid,
    }),
  );

describe('findParamAnnotations', () => {
  it('finds annotations in document order, with the property path and the location in the schema', () => {
    const found = verdicts(
      schema({
        a: { type: 'string', 'x-mcp-header': 'A' },
        o: { type: 'object', properties: { b: { type: 'boolean', 'x-mcp-header': 'B' } } },
      }),
    );
    expect(found).toEqual([
      {
        path: ['a'],
        location: ['properties', 'a'],
        name: 'A',
        reachable: true,
        tokenName: true,
        type: 'string',
        duplicateOf: null,
        valid: true,
      },
      {
        path: ['o', 'b'],
        location: ['properties', 'o', 'properties', 'b'],
        name: 'B',
        reachable: true,
        tokenName: true,
        type: 'boolean',
        duplicateOf: null,
        valid: true,
      },
    ]);
  });

  it.each([
    ['on the root', { type: 'object', 'x-mcp-header': 'R' }],
    ['under items', schema({ l: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } })],
    ['under anyOf', schema({ c: { anyOf: [{ type: 'string', 'x-mcp-header': 'C' }] } })],
    ['under $defs', { type: 'object', $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }],
  ])('marks an annotation %s unreachable', (_where, input) => {
    expect(verdicts(input)).toEqual([expect.objectContaining({ reachable: false, valid: false })]);
  });

  it.each([[''], ['My Region'], ['Région'], [7], [null]])('refuses the name %j as a header token', (name) => {
    expect(verdicts(schema({ v: { type: 'string', 'x-mcp-header': name } }))).toEqual([
      expect.objectContaining({ tokenName: false, valid: false }),
    ]);
  });

  it.each([['number'], ['object'], ['null'], [undefined]])('gives a property of type %j no header type', (type) => {
    expect(verdicts(schema({ v: { type, 'x-mcp-header': 'V' } }))).toEqual([
      expect.objectContaining({ type: null, valid: false }),
    ]);
  });

  it('reads a type array only when the rules allow it', () => {
    const nullable = schema({ v: { type: ['integer', 'null'], 'x-mcp-header': 'V' } });
    expect(verdicts(nullable)[0]).toMatchObject({ type: null, valid: false });
    expect(verdicts(nullable, { ...STRICT, typeArrays: true })[0]).toMatchObject({ type: 'integer', valid: true });
    expect(
      verdicts(schema({ v: { type: ['integer', 'string'], 'x-mcp-header': 'V' } }), { ...STRICT, typeArrays: true })[0],
    ).toMatchObject({ type: null });
  });

  it('skips the values of data keywords only when the rules list them', () => {
    const input = schema({ v: { type: 'object', default: { 'x-mcp-header': 'Data' } } });
    expect(verdicts(input)).toEqual([expect.objectContaining({ name: 'Data', reachable: false })]);
    expect(verdicts(input, { ...STRICT, dataKeywords: new Set(['default']) })).toEqual([]);
  });

  it('compares names ignoring case, against earlier valid annotations only', () => {
    const found = verdicts(
      schema({
        broken: { type: 'number', 'x-mcp-header': 'Tenant' },
        first: { type: 'string', 'x-mcp-header': 'Tenant' },
        second: { type: 'string', 'x-mcp-header': 'TENANT' },
        third: { type: 'integer', 'x-mcp-header': 'tenant' },
      }),
    );
    expect(found.map(({ duplicateOf, valid }) => ({ duplicateOf, valid }))).toEqual([
      { duplicateOf: null, valid: false },
      { duplicateOf: null, valid: true },
      { duplicateOf: ['first'], valid: false },
      { duplicateOf: ['first'], valid: false },
    ]);
  });

  it('finds nothing in a schema without annotations, or in no schema at all', () => {
    expect(verdicts(schema({ a: { type: 'string' } }))).toEqual([]);
    expect(verdicts(undefined)).toEqual([]);
  });
});

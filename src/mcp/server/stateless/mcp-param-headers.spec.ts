import { McpParamHeaderError, mcpParamHeadersOf } from './mcp-param-headers';

function problemOf(schema: Record<string, unknown>): string {
  try {
    mcpParamHeadersOf(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(McpParamHeaderError);
    return (error as Error).message;
  }
  throw new Error('expected the schema to be refused');
}

describe('mcpParamHeadersOf', () => {
  it('finds string, integer and boolean parameters, nested ones included, with their property path', () => {
    const schema = {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        shard: { type: ['integer', 'null'], 'x-mcp-header': 'Shard' },
        options: { type: 'object', properties: { dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' } } },
        query: { type: 'string' },
      },
    };
    expect(mcpParamHeadersOf(schema)).toEqual([
      { name: 'Region', path: ['region'], type: 'string' },
      { name: 'Shard', path: ['shard'], type: 'integer' },
      { name: 'Dry-Run', path: ['options', 'dryRun'], type: 'boolean' },
    ]);
  });

  it('finds nothing in a schema without annotations', () => {
    expect(mcpParamHeadersOf({ type: 'object', properties: { a: { type: 'string' } } })).toEqual([]);
  });

  it.each([
    ['an empty name', { a: { type: 'string', 'x-mcp-header': '' } }, 'non-empty HTTP token'],
    ['a name with a space', { a: { type: 'string', 'x-mcp-header': 'My Region' } }, 'non-empty HTTP token'],
    ['a name with CR LF', { a: { type: 'string', 'x-mcp-header': 'A\r\nB' } }, 'non-empty HTTP token'],
    ['a name that is not a string', { a: { type: 'string', 'x-mcp-header': 7 } }, 'non-empty HTTP token'],
    ['a number parameter', { a: { type: 'number', 'x-mcp-header': 'A' } }, 'not "number"'],
    ['an object parameter', { a: { type: 'object', 'x-mcp-header': 'A' } }, 'type "object"'],
    ['a parameter without a type', { a: { 'x-mcp-header': 'A' } }, 'type null'],
  ])('refuses %s', (_case, properties, reason) => {
    expect(problemOf({ type: 'object', properties })).toContain(reason);
  });

  it('refuses two names equal ignoring case', () => {
    const message = problemOf({
      type: 'object',
      properties: { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'REGION' } },
    });
    expect(message).toContain('"REGION"');
    expect(message).toContain('repeats "Region"');
  });

  it.each([
    [
      'under items',
      { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } },
      '/properties/list/items',
    ],
    ['under oneOf', { choice: { oneOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }, '/properties/choice/oneOf/0'],
    ['under $defs', { a: { type: 'string' } }, '/$defs/b'],
    [
      'under if/then',
      { a: { type: 'object', if: { properties: { b: { type: 'string', 'x-mcp-header': 'A' } } } } },
      '/properties/a/if/properties/b',
    ],
  ])('refuses an annotation %s (not statically reachable)', (_case, properties, at) => {
    const schema = { type: 'object', properties, $defs: { b: { type: 'string', 'x-mcp-header': 'B' } } };
    const message = problemOf(schema);
    expect(message).toContain('not on a property reachable from the root');
    expect(message).toContain(at);
  });

  it('searches data keywords too: an annotation inside a default value refuses the tool', () => {
    expect(
      problemOf({ type: 'object', properties: { a: { type: 'object', default: { 'x-mcp-header': 'A' } } } }),
    ).toContain('/properties/a/default');
  });

  it('reports a repeated name before a bad type on the same annotation', () => {
    const message = problemOf({
      type: 'object',
      properties: { a: { type: 'string', 'x-mcp-header': 'A' }, b: { type: 'number', 'x-mcp-header': 'a' } },
    });
    expect(message).toContain('repeats "A"');
  });

  it('refuses an annotation on the root itself', () => {
    expect(problemOf({ type: 'object', 'x-mcp-header': 'Root' })).toContain('(root)');
  });
});

import { paramHeaders, scanParamHeaders } from './param-headers';

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('x-mcp-header annotations', () => {
  it('accepts string, integer and boolean properties reached through properties only, nested ones included', () => {
    const scan = scanParamHeaders(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        count: { type: 'integer', 'x-mcp-header': 'Count' },
        target: { type: 'object', properties: { zone: { type: 'boolean', 'x-mcp-header': 'Zone' } } },
        note: { type: 'string', default: { 'x-mcp-header': 'ignored' } },
      }),
    );
    expect(scan).toEqual({
      ok: true,
      headers: [
        { path: ['region'], name: 'Region' },
        { path: ['count'], name: 'Count' },
        { path: ['target', 'zone'], name: 'Zone' },
      ],
    });
  });

  it.each([
    ['empty', schema({ v: { type: 'string', 'x-mcp-header': '' } }), /empty/],
    ['a number', schema({ v: { type: 'number', 'x-mcp-header': 'V' } }), /type number/],
    ['an object', schema({ v: { type: 'object', 'x-mcp-header': 'V' } }), /not of type string, integer or boolean/],
    ['null', schema({ v: { type: 'null', 'x-mcp-header': 'V' } }), /not of type/],
    ['without a type', schema({ v: { 'x-mcp-header': 'V' } }), /not of type/],
    [
      'a duplicate in another case',
      schema({ a: { type: 'string', 'x-mcp-header': 'Tenant' }, b: { type: 'string', 'x-mcp-header': 'TENANT' } }),
      /duplicates/,
    ],
    ['a space', schema({ v: { type: 'string', 'x-mcp-header': 'My Region' } }), /token/],
    ['a colon', schema({ v: { type: 'string', 'x-mcp-header': 'Region:Primary' } }), /token/],
    ['non-ASCII', schema({ v: { type: 'string', 'x-mcp-header': 'Région' } }), /token/],
    ['a control character', schema({ v: { type: 'string', 'x-mcp-header': 'Region\t1' } }), /token/],
    ['under items', schema({ v: { type: 'array', items: { type: 'string', 'x-mcp-header': 'V' } } }), /not reachable/],
    ['under anyOf', schema({ v: { anyOf: [{ type: 'string', 'x-mcp-header': 'V' }] } }), /not reachable/],
    [
      'under $defs',
      {
        type: 'object',
        $defs: { v: { type: 'string', 'x-mcp-header': 'V' } },
        properties: { v: { $ref: '#/$defs/v' } },
      },
      /not reachable/,
    ],
    ['on the root', { type: 'object', 'x-mcp-header': 'Root' }, /root/],
    ['on a nullable type', schema({ v: { type: ['string', 'null'], 'x-mcp-header': 'V' } }), /not of type/],
  ])('rejects an annotation that is %s', (_what, inputSchema, reason) => {
    const scan = scanParamHeaders(inputSchema);
    expect(scan.ok).toBe(false);
    expect(!scan.ok && scan.reason).toMatch(reason);
  });

  it('reports every broken annotation, a bad type before a repeated name', () => {
    const scan = scanParamHeaders(
      schema({
        a: { type: 'string', 'x-mcp-header': 'A' },
        b: { type: 'number', 'x-mcp-header': 'a' },
        c: { type: 'string', 'x-mcp-header': '' },
      }),
    );
    expect(!scan.ok && scan.reason.split('; ')).toEqual([
      expect.stringMatching(/type number/),
      expect.stringMatching(/empty/),
    ]);
  });

  it('turns present values into header text and omits absent and null ones', () => {
    const headers = [
      { path: ['s'], name: 'S' },
      { path: ['i'], name: 'I' },
      { path: ['b'], name: 'B' },
      { path: ['n', 'x'], name: 'X' },
      { path: ['gone'], name: 'Gone' },
      { path: ['nil'], name: 'Nil' },
    ];
    const args = { s: 'Grüße', i: -7, b: false, n: { x: 'plain value' }, nil: null };
    expect(paramHeaders(headers, args)).toEqual({
      'Mcp-Param-S': `=?base64?${Buffer.from('Grüße').toString('base64')}?=`,
      'Mcp-Param-I': '-7',
      'Mcp-Param-B': 'false',
      'Mcp-Param-X': 'plain value',
    });
  });
});

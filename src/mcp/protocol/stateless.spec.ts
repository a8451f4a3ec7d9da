import { StatelessMetaKey, decodeHeaderValue, envelopeVersionOf } from './stateless';

describe('envelopeVersionOf', () => {
  it.each<[Record<string, unknown> | undefined, string | null]>([
    [undefined, null],
    [{}, null],
    [{ _meta: null }, null],
    [{ _meta: 'x' }, null],
    [{ _meta: {} }, null],
    [{ _meta: { [StatelessMetaKey.ProtocolVersion]: 20260728 } }, null],
    [{ _meta: { [StatelessMetaKey.ProtocolVersion]: '2026-07-28' } }, '2026-07-28'],
    [{ _meta: { [StatelessMetaKey.ProtocolVersion]: '1999-01-01', other: 1 } }, '1999-01-01'],
  ])('reads the envelope of params %j as %j', (params, version) => {
    expect(envelopeVersionOf(params)).toBe(version);
  });

  it('reads no envelope from a _meta that is not a plain object, even one carrying the key', () => {
    const key = StatelessMetaKey.ProtocolVersion;
    expect(envelopeVersionOf({ _meta: Object.assign([], { [key]: '2026-07-28' }) })).toBeNull();
    expect(envelopeVersionOf({ _meta: Object.assign(() => undefined, { [key]: '2026-07-28' }) })).toBeNull();
  });
});

describe('decodeHeaderValue', () => {
  it('returns a plain value trimmed, also when it only starts or only ends like the sentinel', () => {
    expect(decodeHeaderValue('  tools/call\t')).toBe('tools/call');
    expect(decodeHeaderValue('=?base64?abc')).toBe('=?base64?abc');
    expect(decodeHeaderValue('abc?=')).toBe('abc?=');
  });

  it('refuses a value with characters a header may not carry', () => {
    expect(decodeHeaderValue('a\u0000b')).toBeNull();
    expect(decodeHeaderValue('caf\u00e9')).toBeNull();
  });

  it('decodes padded Base64 and refuses unpadded or malformed sentinels', () => {
    expect(decodeHeaderValue('=?base64?Y2Fmw6k=?=')).toBe('caf\u00e9');
    expect(decodeHeaderValue('=?base64?YQ==?=')).toBe('a');
    expect(decodeHeaderValue('=?base64?YQ?=')).toBeNull();
    expect(decodeHeaderValue('=?base64?a!b=?=')).toBeNull();
  });

  it('refuses Base64 that is not valid UTF-8, without throwing', () => {
    expect(decodeHeaderValue('=?base64?/w==?=')).toBeNull();
    expect(decodeHeaderValue('=?base64?gICA?=')).toBeNull();
  });
});

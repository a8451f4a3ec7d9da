import { encodeHeaderValue, routingHeaders, withEnvelope } from './stateless-request';
import { verdictFromAnswer } from './discover-verdict';

describe('stateless requests', () => {
  it('encodes header values that are not plain visible ASCII with the Base64 sentinel', () => {
    expect(encodeHeaderValue('us-west1')).toBe('us-west1');
    expect(encodeHeaderValue('Hello, 世界')).toBe('=?base64?SGVsbG8sIOS4lueVjA==?=');
    expect(encodeHeaderValue(' padded ')).toBe('=?base64?IHBhZGRlZCA=?=');
    expect(encodeHeaderValue('line1\nline2')).toBe('=?base64?bGluZTEKbGluZTI=?=');
    expect(encodeHeaderValue('=?base64?literal?=')).toBe('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
  });

  it('mirrors method and name (or uri) into the routing headers', () => {
    const call = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'météo' } };
    expect(routingHeaders(call, '2026-07-28')).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': '=?base64?bcOpdMOpbw==?=',
    });
    const read = { jsonrpc: '2.0' as const, id: 2, method: 'resources/read', params: { uri: 'file:///a.txt' } };
    expect(routingHeaders(read, '2026-07-28')['mcp-name']).toBe('file:///a.txt');
    expect(routingHeaders({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, '2026-07-28')).not.toHaveProperty(
      'mcp-name',
    );
  });

  it('merges the envelope into the caller _meta and leaves requestState untouched', () => {
    const state = 'a"b\\c\u2028';
    const params = withEnvelope(
      { name: 't', requestState: state, _meta: { progressToken: 7 } },
      { protocolVersion: '2026-07-28', clientInfo: { name: 'c', version: '1' }, clientCapabilities: {} },
    );
    expect(params.requestState).toBe(state);
    expect(params._meta).toEqual({
      progressToken: 7,
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    });
  });

  it('takes only a DiscoverResult listing 2026-07-28, or a stateless error, as proof of a stateless server', () => {
    expect(
      verdictFromAnswer('s', {
        jsonrpc: '2.0',
        id: 1,
        result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } },
      }),
    ).toMatchObject({ era: 'stateless', capabilities: { tools: {} } });
    expect(verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2027-01-01'] } }).era).toBe(
      'legacy',
    );
    expect(
      verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }).era,
    ).toBe('legacy');
    expect(
      verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'Header mismatch' } }).era,
    ).toBe('stateless');
    const unsupported = { code: -32022, message: 'Unsupported', data: { supported: ['2025-11-25'] } };
    expect(verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, error: unsupported })).toEqual({
      era: 'legacy',
      reason: expect.any(String),
      version: '2025-11-25',
    });
    expect(() =>
      verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, error: { ...unsupported, data: { supported: ['1999-01-01'] } } }),
    ).toThrow(/none of which/);
  });
});

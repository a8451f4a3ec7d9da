import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import { verdictFromAnswer, verdictFromFailure } from './discover-verdict';

const error = (code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id: 1,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

describe('verdictFromAnswer', () => {
  it('takes no JSON-RPC answer for a 2025 server', () => {
    expect(verdictFromAnswer('s', null)).toEqual({ era: 'legacy', reason: 'the probe got no JSON-RPC answer' });
  });

  it('takes an unsupported-version error that offers 2026-07-28 for a stateless server', () => {
    expect(verdictFromAnswer('s', error(-32022, 'unsupported', { supported: ['2026-07-28', 7] }))).toEqual({
      era: 'stateless',
      version: '2026-07-28',
      serverInfo: null,
      capabilities: null,
    });
  });

  it('takes an unsupported-version error that offers a session revision for that 2025 revision', () => {
    expect(verdictFromAnswer('s', error(-32022, 'unsupported', { supported: ['2025-06-18'] }))).toEqual({
      era: 'legacy',
      reason: 'the server supports 2025-06-18',
      version: '2025-06-18',
    });
  });

  it('fails undelivered when the server speaks no revision of this client', () => {
    const run = () => verdictFromAnswer('s', error(-32022, 'unsupported', { supported: 'all of them' }));
    expect(run).toThrow(McpProtocolError);
    expect(run).toThrow('MCP server "s" supports only protocol revisions [], none of which this client speaks');
  });

  it('takes any other stateless error for a stateless server, and any other error for a 2025 one', () => {
    expect(verdictFromAnswer('s', error(-32020, 'header mismatch'))).toMatchObject({ era: 'stateless' });
    expect(verdictFromAnswer('s', error(-32601, 'Method not found'))).toEqual({
      era: 'legacy',
      reason: 'server/discover was answered with error -32601: Method not found',
    });
  });

  it('requires 2026-07-28 among supportedVersions, and reads serverInfo and capabilities only when they are objects', () => {
    expect(
      verdictFromAnswer('s', { jsonrpc: '2.0', id: 1, result: { supportedVersions: '2026-07-28' } }),
    ).toMatchObject({ era: 'legacy' });
    expect(
      verdictFromAnswer('s', {
        jsonrpc: '2.0',
        id: 1,
        result: {
          supportedVersions: ['2026-07-28'],
          capabilities: [],
          _meta: { 'io.modelcontextprotocol/serverInfo': 'x' },
        },
      }),
    ).toEqual({
      era: 'stateless',
      version: '2026-07-28',
      serverInfo: null,
      capabilities: null,
    });
  });
});

describe('verdictFromFailure', () => {
  it.each([400, 404, 405, 406, 415, 422])('takes a refusal with HTTP %i for a 2025 server', (status) => {
    expect(verdictFromFailure(new McpTransportError('refused', false, status))).toEqual({
      era: 'legacy',
      reason: `server/discover was refused with HTTP ${status}`,
    });
  });

  it('takes an answer that is not JSON-RPC for a 2025 server', () => {
    expect(verdictFromFailure(new McpProtocolError('not JSON', true))).toEqual({
      era: 'legacy',
      reason: 'server/discover got no usable answer: not JSON',
    });
  });

  it.each([
    ['a 401', new McpTransportError('who?', false, 401)],
    ['a 503', new McpTransportError('busy', true, 503)],
    ['a refused connection', new McpTransportError('ECONNREFUSED', false)],
    ['a timeout', new McpTimeoutError('slow', true, 10)],
    ['anything else', new Error('bug')],
  ])('takes %s as proving nothing', (_case, failure) => {
    expect(verdictFromFailure(failure)).toBeNull();
  });
});

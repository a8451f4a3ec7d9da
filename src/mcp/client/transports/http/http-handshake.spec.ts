import { McpProtocolError } from '../../../errors/mcp-client.errors';
import { handshakeFromResponse } from './http-handshake';

describe('handshakeFromResponse', () => {
  it('refuses an error answer to initialize with McpProtocolError naming the server', () => {
    const run = () =>
      handshakeFromResponse('h', { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'unsupported' } });
    expect(run).toThrow(McpProtocolError);
    expect(run).toThrow('MCP server "h" refused initialize: -32602 unsupported');
  });

  it('refuses a revision this client does not speak', () => {
    expect(() => handshakeFromResponse('h', { jsonrpc: '2.0', id: 1, result: { protocolVersion: 7 } })).toThrow(
      'MCP server "h" chose protocol revision 7, which this client does not speak',
    );
  });

  it('reads serverInfo and capabilities only when they are objects', () => {
    expect(
      handshakeFromResponse('h', {
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2025-11-25', serverInfo: ['x'], capabilities: null },
      }),
    ).toEqual({
      protocolVersion: '2025-11-25',
      serverInfo: null,
      capabilities: null,
    });
  });
});

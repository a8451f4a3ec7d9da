import { buildInitializeRequest, readInitializeResponse } from './stdio-handshake';

describe('the stdio initialize handshake', () => {
  it('asks for the latest session revision unless told another', () => {
    expect(buildInitializeRequest({}, { name: 'c', version: '1' }).params).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    expect(buildInitializeRequest({ roots: {} }, { name: 'c', version: '1' }, '2025-03-26').params).toMatchObject({
      protocolVersion: '2025-03-26',
      capabilities: { roots: {} },
    });
  });

  it.each([
    [
      'an error answer',
      { jsonrpc: '2.0', id: 'i', error: { code: -32602, message: 'bad params' } },
      'initialize was answered with error -32602: bad params',
    ],
    [
      'a result that is an array',
      { jsonrpc: '2.0', id: 'i', result: [] },
      'initialize was answered without a result object',
    ],
    [
      'an unknown revision',
      { jsonrpc: '2.0', id: 'i', result: { protocolVersion: '2024-11-05' } },
      'the server chose protocol version "2024-11-05", which this client does not speak',
    ],
  ])('refuses %s, saying why', (_case, response, refused) => {
    expect(readInitializeResponse(response as never)).toEqual({ refused });
  });

  it('reads serverInfo and capabilities only when they are objects, and instructions when given', () => {
    expect(
      readInitializeResponse({
        jsonrpc: '2.0',
        id: 'i',
        result: { protocolVersion: '2025-06-18', serverInfo: 'x', capabilities: [], instructions: 'Be kind.' },
      }),
    ).toEqual({
      protocolVersion: '2025-06-18',
      serverInfo: null,
      capabilities: null,
      instructions: 'Be kind.',
    });
  });
});

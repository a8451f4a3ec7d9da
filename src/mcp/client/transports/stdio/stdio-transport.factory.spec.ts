import type { McpTransportFactoryContext } from '../mcp-transport-factory.interface';
import { StdioTransportFactory } from './stdio-transport.factory';

const context: McpTransportFactoryContext = {
  server: 'local',
  clientCapabilities: {},
  resolve: () => {
    throw new Error('not used');
  },
};

describe('StdioTransportFactory', () => {
  const factory = new StdioTransportFactory();

  it('accepts the shutdown graces of a server entry and hands them to the transport', async () => {
    expect(factory.optionKeys).toEqual(expect.arrayContaining(['closeGraceMs', 'killGraceMs']));
    const config = factory.resolve('local', { command: ['node', 'server.js'], closeGraceMs: 30_000, killGraceMs: 500 });
    expect(config).toMatchObject({ transport: 'stdio', command: ['node', 'server.js'], closeGraceMs: 30_000 });
    const transport = factory.create(config, context);
    // The transport checks the values it is given: a bad grace from an entry fails there, naming it.
    expect(() => factory.create({ ...config, closeGraceMs: -1 }, context)).toThrow(
      '"closeGraceMs" must be a finite number >= 0',
    );
    expect(() => factory.create({ ...config, killGraceMs: Number.NaN }, context)).toThrow(
      '"killGraceMs" must be a finite number >= 0',
    );
    await transport.close?.();
  });
});

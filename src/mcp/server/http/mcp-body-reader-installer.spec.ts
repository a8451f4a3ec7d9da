import { mcpPathKey } from './mcp-body-reader-installer';

describe('mcpPathKey', () => {
  it.each(['/mcp', '/MCP', '/Mcp/', '/mcp//', '//mcp', 'mcp', '/mcp///'])('maps %j to the key of /mcp', (path) => {
    expect(mcpPathKey(path)).toBe('/mcp');
  });

  it('keeps the segments of a prefixed path apart', () => {
    expect(mcpPathKey('/API//v1/MCP/')).toBe('/api/v1/mcp');
    expect(mcpPathKey('/')).toBe('/');
  });

  it('does not merge different paths', () => {
    expect(mcpPathKey('/mcp2')).not.toBe(mcpPathKey('/mcp'));
    expect(mcpPathKey('/m/cp')).not.toBe(mcpPathKey('/mcp'));
  });
});

import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { resolveHttpTransportOptions } from './http.options';

describe('resolveHttpTransportOptions', () => {
  it('applies the defaults', () => {
    const resolved = resolveHttpTransportOptions({ url: 'http://127.0.0.1:3000/mcp' });
    expect(resolved).toMatchObject({
      bearerToken: null,
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'durable-mcp' },
      retries: 2,
      maxRawResponseLength: 262144,
    });
    expect(resolved.url.href).toBe('http://127.0.0.1:3000/mcp');
  });

  it('refuses a URL that is not http(s), saying what to give instead', () => {
    expect(() => resolveHttpTransportOptions({ url: 'not a url' })).toThrow(McpConfigurationError);
    expect(() => resolveHttpTransportOptions({ url: 'file:///tmp/mcp' })).toThrow(/http or https/);
  });

  it('refuses negative numbers and names the option', () => {
    expect(() => resolveHttpTransportOptions({ url: 'http://h/mcp', retry: { retries: -1 } })).toThrow(
      /"retry.retries"/,
    );
  });
});

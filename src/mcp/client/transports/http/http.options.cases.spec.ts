import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { staticToken } from '../../auth/static-token.auth';
import { MemoryTokenStore } from '../../auth/memory-token.store';
import { HTTP_DEFAULT_MAX_MESSAGE_SIZE, resolveHttpTransportOptions, type HttpTransportOptions } from './http.options';

describe('resolveHttpTransportOptions, every option', () => {
  it('keeps every value given, flooring the counts, and copies the headers', () => {
    const headers = { 'X-Tenant': 'a' };
    const auth = staticToken('provided');
    const tokenStore = new MemoryTokenStore();
    const resolved = resolveHttpTransportOptions({
      url: new URL('https://127.0.0.1:8443/mcp?x=1'),
      bearerToken: 'tok',
      auth,
      tokenStore,
      headers,
      clientInfo: { name: 'app', version: '3.1.0' },
      capabilities: { roots: {} },
      protocolVersion: '2025-03-26',
      retry: { retries: 2.9, initialDelayMs: 0, maxDelayMs: 10 },
      maxRawResponseLength: 0,
      maxStreamResumptions: 1.5,
      cancelNoticeTimeoutMs: 0,
      maxResponseBytes: 1,
      maxEventChars: 4096,
    });
    headers['X-Tenant'] = 'changed';
    expect({ ...resolved, url: resolved.url.href }).toEqual({
      url: 'https://127.0.0.1:8443/mcp?x=1',
      bearerToken: 'tok',
      auth,
      tokenStore,
      headers: { 'X-Tenant': 'a' },
      clientInfo: { name: 'app', version: '3.1.0' },
      capabilities: { roots: {} },
      protocolVersion: '2025-03-26',
      retries: 2,
      initialDelayMs: 0,
      maxDelayMs: 10,
      maxRawResponseLength: 0,
      maxStreamResumptions: 1,
      cancelNoticeTimeoutMs: 0,
      maxResponseBytes: 1,
      maxEventChars: 4096,
    });
  });

  it('treats an empty bearer token as none and leaves both size limits at 16 MiB by default', () => {
    const resolved = resolveHttpTransportOptions({ url: 'http://127.0.0.1/mcp', bearerToken: '' });
    expect(resolved.bearerToken).toBeNull();
    expect(resolved.auth).toBeNull();
    expect(resolved.tokenStore).toBeInstanceOf(MemoryTokenStore);
    expect(resolved.headers).toEqual({});
    // The documented 16 MiB, as the number: a change of the constant must fail here.
    expect([resolved.maxResponseBytes, resolved.maxEventChars]).toEqual([16_777_216, 16_777_216]);
    expect(HTTP_DEFAULT_MAX_MESSAGE_SIZE).toBe(16 * 1024 * 1024);
  });

  it.each<[string, Partial<HttpTransportOptions>, string]>([
    [
      'an infinite maxDelayMs',
      { retry: { maxDelayMs: Infinity } },
      'HttpTransport option "retry.maxDelayMs" must be a number >= 0 (got Infinity); remove it to use the default 2000.',
    ],
    [
      'a NaN cancelNoticeTimeoutMs',
      { cancelNoticeTimeoutMs: Number.NaN },
      'HttpTransport option "cancelNoticeTimeoutMs" must be a number >= 0 (got NaN); remove it to use the default 5000.',
    ],
    [
      'a zero maxResponseBytes',
      { maxResponseBytes: 0 },
      'HttpTransport option "maxResponseBytes" must be an integer >= 1 (got 0); remove it to use the default 16777216.',
    ],
    [
      'a fractional maxEventChars',
      { maxEventChars: 1.5 },
      'HttpTransport option "maxEventChars" must be an integer >= 1 (got 1.5)',
    ],
    [
      'a maxEventChars given as text',
      { maxEventChars: '10' as never },
      'HttpTransport option "maxEventChars" must be an integer >= 1 (got 10)',
    ],
    [
      'an unknown option',
      { bearer: 'x' } as never,
      'HttpTransport: unknown option "bearer" (did you mean "bearerToken"?',
    ],
    [
      'an unknown retry option',
      { retry: { delayMs: 5 } as never },
      'HttpTransport option "retry": unknown option "delayMs"',
    ],
    [
      'a ws URL',
      { url: 'ws://127.0.0.1/mcp' },
      'HttpTransport option "url" must use http or https (got "ws:"); use StdioTransport for local processes.',
    ],
  ])('refuses %s, saying how to fix it', (_case, options, message) => {
    let thrown: unknown;
    try {
      resolveHttpTransportOptions({ url: 'http://127.0.0.1/mcp', ...options });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpConfigurationError);
    expect((thrown as Error).message).toContain(message);
  });
});

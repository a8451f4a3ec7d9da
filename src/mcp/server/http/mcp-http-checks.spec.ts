import { acceptsJson, headerValue, isJsonContentType, isOriginAllowed } from './mcp-http-checks';

describe('isOriginAllowed', () => {
  it('allows requests without an Origin header whatever the configuration', () => {
    expect(isOriginAllowed(undefined, undefined)).toBe(true);
    expect(isOriginAllowed(undefined, ['https://app.example'])).toBe(true);
    expect(isOriginAllowed(undefined, [])).toBe(true);
  });

  describe('by default (no allowedOrigins)', () => {
    it.each([
      'http://localhost',
      'http://localhost:3000',
      'https://localhost:8443',
      'http://127.0.0.1',
      'http://127.0.0.1:5173',
      'http://[::1]',
      'http://[::1]:6274',
      'http://LOCALHOST:3000',
    ])('allows the local origin %s', (origin) => {
      expect(isOriginAllowed(origin, undefined)).toBe(true);
    });

    it.each([
      'https://evil.example',
      'http://localhost.evil.example',
      'http://evil.example:3000',
      'http://127.0.0.2:3000',
      'http://0.0.0.0:3000',
      'http://192.168.1.10',
      'file://localhost',
      'null',
      '',
      'not a url',
    ])('rejects the origin %j', (origin) => {
      expect(isOriginAllowed(origin, undefined)).toBe(false);
    });
  });

  it("allows every origin with '*'", () => {
    expect(isOriginAllowed('https://evil.example', '*')).toBe(true);
    expect(isOriginAllowed('null', '*')).toBe(true);
  });

  describe('with an explicit list', () => {
    const allowed = ['https://app.example', 'http://localhost:3000'];

    it('allows exactly the listed origins', () => {
      expect(isOriginAllowed('https://app.example', allowed)).toBe(true);
      expect(isOriginAllowed('http://localhost:3000', allowed)).toBe(true);
    });

    it('rejects origins that are not listed, local ones included', () => {
      expect(isOriginAllowed('https://other.example', allowed)).toBe(false);
      expect(isOriginAllowed('http://app.example', allowed)).toBe(false);
      expect(isOriginAllowed('https://app.example:8443', allowed)).toBe(false);
      expect(isOriginAllowed('http://localhost:4000', allowed)).toBe(false);
      expect(isOriginAllowed('http://127.0.0.1:3000', allowed)).toBe(false);
    });

    it('rejects every browser origin when the list is empty', () => {
      expect(isOriginAllowed('http://localhost:3000', [])).toBe(false);
    });
  });
});

describe('isJsonContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
    ' application/json ',
  ])('accepts %j', (contentType) => {
    expect(isJsonContentType(contentType)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'text/plain',
    'text/json',
    'application/json-patch+json',
    'application/jsonx',
    'multipart/form-data',
    'application/x-www-form-urlencoded',
  ])('rejects %j', (contentType) => {
    expect(isJsonContentType(contentType)).toBe(false);
  });
});

describe('acceptsJson', () => {
  it.each([
    'application/json',
    'application/json, text/event-stream',
    'text/event-stream, application/json',
    'text/event-stream;q=1, application/json;q=0.9',
    'application/*',
    '*/*',
    'text/html, */*;q=0.8',
    'APPLICATION/JSON',
  ])('accepts %j', (accept) => {
    expect(acceptsJson(accept)).toBe(true);
  });

  it.each([undefined, '', 'text/event-stream', 'text/html', 'text/*', 'application/xml', 'application/json-seq'])(
    'rejects %j',
    (accept) => {
      expect(acceptsJson(accept)).toBe(false);
    },
  );
});

describe('headerValue', () => {
  it('reads a single header, the first of a repeated one, and undefined when absent', () => {
    expect(headerValue({ 'content-type': 'application/json' }, 'content-type')).toBe('application/json');
    expect(headerValue({ 'set-cookie': ['a=1', 'b=2'] }, 'set-cookie')).toBe('a=1');
    expect(headerValue({}, 'origin')).toBeUndefined();
  });
});

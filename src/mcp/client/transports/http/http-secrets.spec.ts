import { HttpSecrets } from './http-secrets';

describe('HttpSecrets', () => {
  it('cuts the bearer token and credential header values out of texts', () => {
    const secrets = new HttpSecrets('tok-123456', { 'X-Api-Key': 'key-abcdef', Accept: 'text/plain' });
    expect(secrets.redact('Bearer tok-123456 and key-abcdef and text/plain')).toBe('Bearer [redacted] and [redacted] and text/plain');
    expect(secrets.redact(null)).toBeNull();
  });

  it('cuts a custom Authorization header whole and its credentials alone', () => {
    const secrets = new HttpSecrets(null, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(secrets.redact('got Basic dXNlcjpwYXNz; raw dXNlcjpwYXNz')).toBe('got [redacted]; raw [redacted]');
  });
});

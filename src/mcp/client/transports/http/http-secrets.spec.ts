import { HttpSecrets } from './http-secrets';

describe('HttpSecrets', () => {
  it('cuts the bearer token and credential header values out of texts', () => {
    const secrets = new HttpSecrets('tok-123456', { 'X-Api-Key': 'key-abcdef', Accept: 'text/plain' });
    expect(secrets.redact('Bearer tok-123456 and key-abcdef and text/plain')).toBe(
      'Bearer [redacted] and [redacted] and text/plain',
    );
    expect(secrets.redact(null)).toBeNull();
  });

  it('cuts a custom Authorization header whole and its credentials alone', () => {
    const secrets = new HttpSecrets(null, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(secrets.redact('got Basic dXNlcjpwYXNz; raw dXNlcjpwYXNz')).toBe('got [redacted]; raw [redacted]');
  });

  it('cuts tokens learnt at run time too, keeping the last eight', () => {
    const secrets = new HttpSecrets('static-token', {});
    for (let i = 0; i < 9; i++) secrets.add(`learnt-token-${i}`);
    secrets.add('abc');
    expect(secrets.redact('static-token learnt-token-1 learnt-token-8 abc')).toBe(
      '[redacted] [redacted] [redacted] abc',
    );
    expect(secrets.redact('learnt-token-0')).toBe('learnt-token-0');
  });
});

import { tokenOf } from './demo-console.guard';

describe('the console guard of the example app reads', () => {
  it('a bearer token, or the password of Basic credentials, and nothing else', () => {
    expect(tokenOf('Bearer token-a')).toBe('token-a');
    expect(tokenOf('bearer   token-a')).toBe('token-a');
    expect(tokenOf(`Basic ${Buffer.from('ops:token-a').toString('base64')}`)).toBe('token-a');
    expect(tokenOf(`Basic ${Buffer.from(':pa:ss').toString('base64')}`)).toBe('pa:ss');
    expect(tokenOf(`Basic ${Buffer.from('no-colon').toString('base64')}`)).toBeUndefined();
    expect(tokenOf('Digest abc')).toBeUndefined();
    expect(tokenOf('Bearer')).toBeUndefined();
    expect(tokenOf(undefined)).toBeUndefined();
    expect(tokenOf(['Bearer a', 'Bearer b'])).toBeUndefined();
  });
});

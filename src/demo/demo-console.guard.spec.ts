import { consoleAdmission, tokenOf } from './demo-console.guard';

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

describe('the console guard of the example app admits', () => {
  const tokens = new Map([
    ['token-a', 'alice'],
    ['token-b', 'bob'],
  ]);
  const bearer = (token: string) => `Bearer ${token}`;

  it("the console administrators only: another principal's token is known but refused", () => {
    const admins = new Set(['alice']);
    expect(consoleAdmission(bearer('token-a'), tokens, admins)).toBe('admin');
    expect(consoleAdmission(`Basic ${Buffer.from('ops:token-a').toString('base64')}`, tokens, admins)).toBe('admin');
    expect(consoleAdmission(bearer('token-b'), tokens, admins)).toBe('not-admin');
    expect(consoleAdmission(bearer('nope'), tokens, admins)).toBe('unknown');
    expect(consoleAdmission(undefined, tokens, admins)).toBe('unknown');
  });

  it('nobody when no administrator is named', () => {
    expect(consoleAdmission(bearer('token-a'), tokens, new Set())).toBe('not-admin');
    expect(consoleAdmission(bearer('token-b'), tokens, new Set())).toBe('not-admin');
  });
});

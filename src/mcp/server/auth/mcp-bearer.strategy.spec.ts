import { bearerTokenOf } from './mcp-bearer.strategy';

describe('bearerTokenOf', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['Bearer   a.b-c_d~e+f/g==', 'a.b-c_d~e+f/g=='],
  ])('reads %j as %j', (header, token) => {
    expect(bearerTokenOf(header)).toBe(token);
  });

  it.each([
    undefined,
    '',
    'Bearer',
    'Bearer ',
    'Basic dG9rZW4=',
    'Bearer a b',
    'Bearer a, Bearer b',
    'Bearer a,b',
    'Token abc',
    'Bearerabc',
  ])('finds no token in %j', (header) => {
    expect(bearerTokenOf(header)).toBeNull();
  });
});

import { UriTemplate, UriTemplateError } from './uri-template';

describe('UriTemplate (RFC 6570 level 1)', () => {
  it('extracts the variables of a matching URI, in order', () => {
    const template = new UriTemplate('repo://{owner}/{repo}/issues/{number}');
    expect(template.variables).toEqual(['owner', 'repo', 'number']);
    expect(template.match('repo://acme/rocket/issues/42')).toEqual({ owner: 'acme', repo: 'rocket', number: '42' });
  });

  it('decodes percent-encoded values, including reserved characters and UTF-8', () => {
    const template = new UriTemplate('notes://{title}');
    expect(template.match('notes://hello%20world%2Fslash%3F')).toEqual({ title: 'hello world/slash?' });
    expect(template.match('notes://caf%C3%A9')).toEqual({ title: 'café' });
  });

  it('round-trips values through expand and match', () => {
    const template = new UriTemplate('search://{query}/page/{n}');
    const params = { query: "a/b c?d#e&f=g!'()*", n: '3' };
    const uri = template.expand(params);
    expect(uri).toBe('search://a%2Fb%20c%3Fd%23e%26f%3Dg%21%27%28%29%2A/page/3');
    expect(template.match(uri)).toEqual(params);
  });

  it.each([
    ['another scheme', 'other://acme/rocket'],
    ['a missing segment', 'repo://acme'],
    ['an extra segment', 'repo://acme/rocket/extra'],
    ['an empty value', 'repo:///rocket'],
    ['a raw query', 'repo://acme/rocket?x=1'],
    ['a raw fragment', 'repo://acme/rocket#top'],
    ['a prefix only', 'repo://acme/rocket/'],
  ])('does not match %s', (_label, uri) => {
    expect(new UriTemplate('repo://{owner}/{repo}').match(uri)).toBeNull();
  });

  it('does not match a value with malformed percent-encoding', () => {
    expect(new UriTemplate('notes://{title}').match('notes://bad%E0%A4%A')).toBeNull();
    expect(new UriTemplate('notes://{title}').match('notes://100%')).toBeNull();
  });

  it('matches literals exactly, including regular-expression characters', () => {
    const template = new UriTemplate('data://files/{name}.json?v=1');
    expect(template.match('data://files/report.json?v=1')).toEqual({ name: 'report' });
    expect(template.match('data://files/reportXjson?v=1')).toBeNull();
    expect(template.match('data://files/report.json?v=12')).toBeNull();
  });

  it('keeps dots inside a value when the literal after it is a dot too', () => {
    expect(new UriTemplate('file:///{name}.txt').match('file:///v1.2.txt')).toEqual({ name: 'v1.2' });
  });

  it.each([
    ['an operator', 'file:///{+path}', /not a level-1 variable/],
    ['a variable list', 'file:///{a,b}', /not a level-1 variable/],
    ['an unclosed brace', 'file:///{path', /unclosed/],
    ['a stray closing brace', 'file:///path}', /unbalanced/],
    ['adjacent variables', 'file:///{a}{b}', /adjacent/],
    ['a repeated variable', 'x://{a}/{a}', /appears twice/],
    ['no variable at all', 'file:///fixed', /no \{variable\}/],
  ])('rejects %s', (_label, text, message) => {
    expect(() => new UriTemplate(text)).toThrow(UriTemplateError);
    expect(() => new UriTemplate(text)).toThrow(message);
  });
});

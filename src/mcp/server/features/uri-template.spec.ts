import { UriTemplate, UriTemplateError, type UriMatchMeter } from './uri-template';

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

  describe('matching time is linear in the URI, whatever the URI', () => {
    // Templates whose regular-expression form backtracks polynomially (one nested loop per variable).
    const hostile: [template: string, unit: string, tail: string][] = [
      ['h://{a}x{b}x{c}x{d}x{e}', 'x', 'y'],
      ['h://{a}-{b}-{c}-{d}.json', '-', '.jsox'],
      ['h://{a}ab{b}ab{c}ab{d}', 'a', 'b'],
      ['h://{a}.{b}.{c}/{d}.{e}', '.', '/'],
      ['h://{a}/{b}?{c}#{d}', '/', ''],
    ];

    function stepsFor(template: UriTemplate, uri: string): number {
      const meter: UriMatchMeter = { steps: 0 };
      template.match(uri, meter);
      return meter.steps;
    }

    it.each(hostile)(
      '%s: steps stay within a constant times the length, at 1k, 10k and 100k characters',
      (text, unit, tail) => {
        const template = new UriTemplate(text);
        const literalChars = text.replace(/\{[^}]+\}/g, '').length;
        for (const size of [1_000, 10_000, 100_000]) {
          const uri = `h://${unit.repeat(size)}${tail}`;
          expect(stepsFor(template, uri)).toBeLessThanOrEqual((literalChars + 2) * uri.length);
        }
        // Ten times the input, at most ten times the work (plus the constant).
        const small = stepsFor(template, `h://${unit.repeat(10_000)}${tail}`);
        const large = stepsFor(template, `h://${unit.repeat(100_000)}${tail}`);
        expect(large).toBeLessThanOrEqual(10 * small + 100);
      },
    );

    it('answers 100k-character hostile URIs against a five-variable template (a backtracking matcher would not finish)', () => {
      const template = new UriTemplate('h://{a}x{b}x{c}x{d}x{e}x');
      expect(template.match(`h://${'x'.repeat(100_000)}y`)).toBeNull();
      const found = template.match(`h://${'x'.repeat(100_000)}`);
      expect(found).toEqual({ a: 'x'.repeat(100_000 - 9), b: 'x', c: 'x', d: 'x', e: 'x' });
    });

    it('finds the same values as the greedy regular expression on every short URI over a small alphabet', () => {
      const templates = [
        't://{a}-{b}',
        't://{a}.{b}.json',
        't://{a}/{b}',
        't://x{a}x{b}x',
        't://{a}--{b}-{c}',
        't://{a}?q={b}',
      ];
      const alphabet = ['a', '-', '.', '/', 'x', '?', 'q', '=', 'json'];
      const regexOf = (text: string) =>
        new RegExp(
          `^${text
            .split(/\{[^}]+\}/)
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('([^/?#]+)')}$`,
        );
      let compared = 0;
      const differences: unknown[] = [];
      for (const text of templates) {
        const template = new UriTemplate(text);
        const regex = regexOf(text);
        const grow = (suffix: string, depth: number): void => {
          const uri = `t://${suffix}`;
          const found = regex.exec(uri);
          const expected = found ? Object.fromEntries(template.variables.map((name, i) => [name, found[i + 1]])) : null;
          const actual = template.match(uri);
          if (JSON.stringify(actual) !== JSON.stringify(expected)) differences.push({ uri, actual, expected });
          compared++;
          if (depth < 4) for (const piece of alphabet) grow(suffix + piece, depth + 1);
        };
        grow('', 0);
      }
      expect(differences).toEqual([]);
      expect(compared).toBe(templates.length * ((9 ** 5 - 1) / 8));
    });
  });
});

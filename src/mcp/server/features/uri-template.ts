/**
 * RFC 6570 level-1 URI templates (`file:///logs/{date}`): simple string expansion only. A
 * template is parsed once at boot; matching a requested URI extracts and decodes its variables.
 */

/** Why a template string could not be parsed. */
export class UriTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UriTemplateError';
  }
}

const VARIABLE_NAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

// A level-1 expansion percent-encodes everything outside the unreserved set, so an expanded
// value never contains a raw "/", "?" or "#": those characters delimit variables when matching.
function isDelimiter(code: number): boolean {
  return code === 0x2f || code === 0x3f || code === 0x23; // "/", "?", "#"
}

/**
 * One stretch of a template between delimiters: literal text around variables, e.g.
 * `{name}.json` is `['', 'name', '.json']`, always an odd number of parts (literal, variable,
 * literal...). `before` is the delimiter that opens it ('' for the first one).
 */
interface Segment {
  before: string;
  literals: string[];
  variables: string[];
}

/** Counts the character comparisons of a match, so a test can check that matching is linear. */
export interface UriMatchMeter {
  steps: number;
}

function decode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** A parsed level-1 URI template. */
export class UriTemplate {
  /** The variable names, in the order they appear. */
  readonly variables: readonly string[];
  private readonly segments: Segment[];

  /** Parses `template`; throws `UriTemplateError` naming the problem when it is not level 1. */
  constructor(readonly template: string) {
    const variables: string[] = [];
    const segments: Segment[] = [{ before: '', literals: [''], variables: [] }];
    const addLiteral = (text: string) => {
      for (let i = 0; i < text.length; i++) {
        const current = segments[segments.length - 1];
        if (isDelimiter(text.charCodeAt(i))) segments.push({ before: text[i], literals: [''], variables: [] });
        else current.literals[current.literals.length - 1] += text[i];
      }
    };
    let rest = template;
    while (rest.length) {
      const open = rest.indexOf('{');
      const close = rest.indexOf('}');
      if (open === -1) {
        if (close !== -1) throw new UriTemplateError(`unbalanced "}" in ${JSON.stringify(template)}`);
        addLiteral(rest);
        break;
      }
      if (close !== -1 && close < open) throw new UriTemplateError(`unbalanced "}" in ${JSON.stringify(template)}`);
      const end = rest.indexOf('}', open);
      if (end === -1) throw new UriTemplateError(`unclosed "{" in ${JSON.stringify(template)}`);
      const name = rest.slice(open + 1, end);
      if (!VARIABLE_NAME.test(name)) {
        throw new UriTemplateError(
          `the expression {${name}} is not a level-1 variable (only {name} with letters, digits, "_" and "." is supported)`,
        );
      }
      if (variables.includes(name)) throw new UriTemplateError(`the variable {${name}} appears twice`);
      if (open === 0 && variables.length) {
        throw new UriTemplateError(
          `the variables {${variables[variables.length - 1]}} and {${name}} are adjacent; put a literal between them`,
        );
      }
      variables.push(name);
      addLiteral(rest.slice(0, open));
      const segment = segments[segments.length - 1];
      segment.variables.push(name);
      segment.literals.push('');
      rest = rest.slice(end + 1);
    }
    if (!variables.length)
      throw new UriTemplateError(`${JSON.stringify(template)} has no {variable}; declare it with @McpResource instead`);
    this.variables = variables;
    this.segments = segments;
  }

  /**
   * The decoded variables when `uri` is an expansion of this template, else null (also when a
   * value carries malformed percent-encoding). Runs in time linear in the URI's length (times
   * the template's literal lengths), whatever the URI: the delimiters of the URI must line up
   * with the template's, and each stretch between them is scanned once from the right. The
   * values found are the ones a greedy regular expression would find (earlier values longest).
   */
  match(uri: string, meter?: UriMatchMeter): Record<string, string> | null {
    const counter = meter ?? { steps: 0 };
    const stretches = splitAtDelimiters(uri, this.segments.length, counter);
    if (!stretches) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < this.segments.length; i++) {
      const segment = this.segments[i];
      if (stretches[i].before !== segment.before) return null;
      const values = matchSegment(segment.literals, stretches[i].text, counter);
      if (!values) return null;
      for (let v = 0; v < values.length; v++) {
        const value = decode(values[v]);
        if (value === null) return null;
        params[segment.variables[v]] = value;
      }
    }
    return params;
  }

  /** Expands the template with `params`, percent-encoding each value. */
  expand(params: Record<string, string>): string {
    return this.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(params[name] ?? '').replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    );
  }
}

/** Cuts `uri` at its delimiters; null as soon as it has more stretches than the template. */
function splitAtDelimiters(
  uri: string,
  expected: number,
  meter: UriMatchMeter,
): { before: string; text: string }[] | null {
  const stretches: { before: string; text: string }[] = [];
  let start = 0;
  let before = '';
  for (let i = 0; i < uri.length; i++) {
    meter.steps++;
    if (!isDelimiter(uri.charCodeAt(i))) continue;
    stretches.push({ before, text: uri.slice(start, i) });
    if (stretches.length >= expected) return null;
    before = uri[i];
    start = i + 1;
  }
  stretches.push({ before, text: uri.slice(start) });
  return stretches.length === expected ? stretches : null;
}

/** True when `literal` occurs in `text` ending exactly at `end` (exclusive). */
function endsAt(text: string, literal: string, end: number, meter: UriMatchMeter): boolean {
  if (end < literal.length) return false;
  for (let k = 1; k <= literal.length; k++) {
    meter.steps++;
    if (text.charCodeAt(end - k) !== literal.charCodeAt(literal.length - k)) return false;
  }
  return true;
}

/**
 * Matches one delimiter-free stretch against `literals` (literal, variable, literal...). Each
 * variable takes at least one character. Placing every literal as far right as it can go, from
 * the last one to the first, leaves the most room to the variables on the left, so a match
 * exists exactly when this placement succeeds, and it gives each earlier variable its longest
 * value. The scan position only moves left, so the work is the stretch's length times the
 * length of the literal looked for.
 */
function matchSegment(literals: string[], text: string, meter: UriMatchMeter): string[] | null {
  const last = literals.length - 1;
  if (!endsAt(text, literals[last], text.length, meter)) return null;
  if (last === 0) return text.length === literals[0].length ? [] : null;
  const values: string[] = new Array<string>(last);
  let valueEnd = text.length - literals[last].length;
  for (let i = last - 1; i >= 1; i--) {
    // The literal must end before valueEnd (its variable needs a character) and leave room on its left.
    let end = valueEnd - 1;
    while (end >= 0 && !endsAt(text, literals[i], end, meter)) end--;
    if (end < 0) return null;
    values[i] = text.slice(end, valueEnd);
    valueEnd = end - literals[i].length;
  }
  const first = literals[0];
  if (valueEnd <= first.length || !endsAt(text, first, first.length, meter)) return null;
  values[0] = text.slice(first.length, valueEnd);
  return values;
}

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
const VALUE_PATTERN = '([^/?#]+)';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
  private readonly pattern: RegExp;

  /** Parses `template`; throws `UriTemplateError` naming the problem when it is not level 1. */
  constructor(readonly template: string) {
    const variables: string[] = [];
    let source = '^';
    let rest = template;
    while (rest.length) {
      const open = rest.indexOf('{');
      const close = rest.indexOf('}');
      if (open === -1) {
        if (close !== -1) throw new UriTemplateError(`unbalanced "}" in ${JSON.stringify(template)}`);
        source += escapeRegExp(rest);
        break;
      }
      if (close !== -1 && close < open) throw new UriTemplateError(`unbalanced "}" in ${JSON.stringify(template)}`);
      const end = rest.indexOf('}', open);
      if (end === -1) throw new UriTemplateError(`unclosed "{" in ${JSON.stringify(template)}`);
      const name = rest.slice(open + 1, end);
      if (!VARIABLE_NAME.test(name)) {
        throw new UriTemplateError(`the expression {${name}} is not a level-1 variable (only {name} with letters, digits, "_" and "." is supported)`);
      }
      if (variables.includes(name)) throw new UriTemplateError(`the variable {${name}} appears twice`);
      if (open === 0 && variables.length) {
        throw new UriTemplateError(`the variables {${variables[variables.length - 1]}} and {${name}} are adjacent; put a literal between them`);
      }
      variables.push(name);
      source += escapeRegExp(rest.slice(0, open)) + VALUE_PATTERN;
      rest = rest.slice(end + 1);
    }
    if (!variables.length) throw new UriTemplateError(`${JSON.stringify(template)} has no {variable}; declare it with @McpResource instead`);
    this.variables = variables;
    this.pattern = new RegExp(`${source}$`);
  }

  /**
   * The decoded variables when `uri` is an expansion of this template, else null (also when a
   * value carries malformed percent-encoding).
   */
  match(uri: string): Record<string, string> | null {
    const found = this.pattern.exec(uri);
    if (!found) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < this.variables.length; i++) {
      const value = decode(found[i + 1]);
      if (value === null) return null;
      params[this.variables[i]] = value;
    }
    return params;
  }

  /** Expands the template with `params`, percent-encoding each value. */
  expand(params: Record<string, string>): string {
    return this.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
      encodeURIComponent(params[name] ?? '').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    );
  }
}

/**
 * The `x-mcp-header` annotations of a tool's input schema: which properties a stateless
 * `tools/call` mirrors into `Mcp-Param-{name}` headers, and which constraint each annotation
 * breaks. The server (refusing a tool at boot) and the client (leaving a tool out of its list)
 * share this reading; each words and orders its own refusals. Pure TypeScript.
 */

/** The schema keyword that mirrors a tool input property into an `Mcp-Param-{name}` header. */
export const X_MCP_HEADER = 'x-mcp-header';

/** The types a mirrored property may have; `number` has no exact text form, so it is not one. */
export type McpParamType = 'string' | 'integer' | 'boolean';

/** Where the readers of annotations differ. */
export interface ParamAnnotationRules {
  /**
   * Accept a `type` array naming one header type, with or without `"null"` (e.g.
   * `["integer", "null"]`). When false, only a single type string counts.
   */
  typeArrays: boolean;
  /**
   * Keywords whose values are data, not subschemas (`default`, `enum`...): an annotation-like key
   * inside them is not read. Keywords not listed are searched like any subschema.
   */
  dataKeywords: ReadonlySet<string>;
}

/** One `x-mcp-header` annotation, with the verdict on each constraint. */
export interface ParamAnnotation {
  /** The `properties` keys from the schema root to the annotated property (empty for the root). */
  path: string[];
  /** Every key from the schema root to the annotated subschema, e.g. for a JSON pointer. */
  location: string[];
  /** The annotation's value as written. */
  name: unknown;
  /** The annotated subschema's `type` as written. */
  declaredType: unknown;
  /** True when the property is reached from the root through `properties` keys alone (never the root itself). */
  reachable: boolean;
  /** True when the name is an HTTP field-name token (RFC 9110 `1*tchar`), hence a non-empty string. */
  tokenName: boolean;
  /** The header type of the property, or null when its declared type is not one. */
  type: McpParamType | null;
  /** An earlier valid annotation whose name is the same ignoring case, or null. */
  duplicateOf: ParamAnnotation | null;
  /** True when every constraint holds: the property is mirrored into a header. */
  valid: boolean;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES: readonly string[] = ['string', 'integer', 'boolean'];

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function headerType(declared: unknown, rules: ParamAnnotationRules): McpParamType | null {
  const types = Array.isArray(declared)
    ? rules.typeArrays
      ? declared.filter((type) => type !== 'null')
      : []
    : [declared];
  return types.length === 1 && HEADER_TYPES.includes(types[0] as string) ? (types[0] as McpParamType) : null;
}

/**
 * Every `x-mcp-header` annotation of `schema`, in document order (a subschema before the ones it
 * contains), each with the verdict on the specification's constraints: on a property reached
 * through `properties` keys alone (not under `items`, composition, conditionals, `$defs`... nor
 * on the root), named by an HTTP token, of type string, integer or boolean, and not named like
 * an earlier valid annotation ignoring case.
 */
export function findParamAnnotations(schema: unknown, rules: ParamAnnotationRules): ParamAnnotation[] {
  const found: ParamAnnotation[] = [];
  const visit = (node: unknown, path: string[], reachable: boolean, location: string[]): void => {
    if (Array.isArray(node))
      return node.forEach((item, index) => visit(item, path, false, [...location, String(index)]));
    if (!isObject(node)) return;
    if (X_MCP_HEADER in node) {
      const name = node[X_MCP_HEADER];
      const tokenName = typeof name === 'string' && TOKEN.test(name);
      const type = headerType(node.type, rules);
      const duplicateOf = tokenName
        ? (found.find((other) => other.valid && (other.name as string).toLowerCase() === name.toLowerCase()) ?? null)
        : null;
      const annotation = {
        path: [...path],
        location,
        name,
        declaredType: node.type,
        reachable: reachable && path.length > 0,
        tokenName,
        type,
        duplicateOf,
      };
      found.push({ ...annotation, valid: annotation.reachable && tokenName && type !== null && duplicateOf === null });
    }
    for (const [key, value] of Object.entries(node)) {
      if (rules.dataKeywords.has(key)) continue;
      if (key === 'properties' && isObject(value)) {
        for (const [property, child] of Object.entries(value))
          visit(child, [...path, property], reachable, [...location, key, property]);
      } else {
        visit(value, path, false, [...location, key]);
      }
    }
  };
  visit(schema, [], true, []);
  return found;
}

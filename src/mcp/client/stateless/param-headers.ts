import { encodeHeaderValue } from './stateless-request';

/** The schema keyword that mirrors a tool parameter into an `Mcp-Param-{Name}` header (SEP-2243). */
export const X_MCP_HEADER = 'x-mcp-header';

/** One valid annotation: where the value sits in the arguments and which header carries it. */
export interface McpParamHeader {
  /** The chain of `properties` keys leading to the parameter. */
  path: string[];
  /** The `x-mcp-header` value: the header is `Mcp-Param-{name}`. */
  name: string;
}

/** The annotations of a tool's input schema, or why they make the tool unusable. */
export type McpParamHeaderScan = { ok: true; headers: McpParamHeader[] } | { ok: false; reason: string };

/** HTTP field-name token (RFC 9110 `1*tchar`). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Types a header value can be made of; `number` is excluded on purpose (no exact text form). */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose values are data, not subschemas: an annotation-like key inside them means nothing. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', X_MCP_HEADER]);

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Reads the `x-mcp-header` annotations of an input schema and checks them against the rules of
 * the Streamable HTTP transport: a non-empty token, unique regardless of case, on a `string`,
 * `integer` or `boolean` property reached from the root through `properties` keys only (never
 * through `items`, composition, conditionals or `$ref`).
 */
export function scanParamHeaders(inputSchema: unknown): McpParamHeaderScan {
  const headers: McpParamHeader[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();

  const check = (schema: Record<string, unknown>, path: string[], reachable: boolean): void => {
    const name = schema[X_MCP_HEADER];
    const where = path.length ? `"${path.join('.')}"` : 'the schema root';
    if (!reachable || path.length === 0) return void problems.push(`${X_MCP_HEADER} on ${where} is not reachable through "properties" alone`);
    if (typeof name !== 'string' || name === '') return void problems.push(`${X_MCP_HEADER} of ${where} is empty or not a string`);
    if (!TOKEN.test(name)) return void problems.push(`${X_MCP_HEADER} ${JSON.stringify(name)} of ${where} is not an HTTP header token`);
    const type = schema.type;
    if (type === 'number') return void problems.push(`${X_MCP_HEADER} ${JSON.stringify(name)} is on ${where} of type number, which is not allowed`);
    if (typeof type !== 'string' || !HEADER_TYPES.has(type)) {
      return void problems.push(`${X_MCP_HEADER} ${JSON.stringify(name)} is on ${where}, which is not of type string, integer or boolean`);
    }
    const other = seen.get(name.toLowerCase());
    if (other) return void problems.push(`${X_MCP_HEADER} ${JSON.stringify(name)} of ${where} duplicates that of "${other}" (names are case-insensitive)`);
    seen.set(name.toLowerCase(), path.join('.'));
    headers.push({ path, name });
  };

  const visit = (node: unknown, path: string[], reachable: boolean): void => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, path, false));
    if (!isObject(node)) return;
    if (X_MCP_HEADER in node) check(node, path, reachable);
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === 'properties' && isObject(value)) {
        for (const [property, schema] of Object.entries(value)) visit(schema, [...path, property], reachable);
      } else {
        visit(value, path, false);
      }
    }
  };

  visit(inputSchema, [], true);
  return problems.length ? { ok: false, reason: problems.join('; ') } : { ok: true, headers };
}

/**
 * The `Mcp-Param-{Name}` headers of one `tools/call`: each annotated argument present (neither
 * absent nor null) as text, strings Base64-encoded when not header-safe.
 */
export function paramHeaders(headers: McpParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers) {
    let value: unknown = args;
    for (const key of header.path) value = isObject(value) ? value[key] : undefined;
    if (typeof value === 'string') out[`Mcp-Param-${header.name}`] = encodeHeaderValue(value);
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) out[`Mcp-Param-${header.name}`] = String(value);
  }
  return out;
}

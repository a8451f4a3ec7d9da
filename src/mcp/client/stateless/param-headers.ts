import {
  findParamAnnotations,
  X_MCP_HEADER,
  type ParamAnnotation,
  type ParamAnnotationRules,
} from '../../protocol/param-header-annotations';
import { encodeHeaderValue } from './stateless-request';

/** One valid annotation: where the value sits in the arguments and which header carries it. */
export interface McpParamHeader {
  /** The chain of `properties` keys leading to the parameter. */
  path: string[];
  /** The `x-mcp-header` value: the header is `Mcp-Param-{name}`. */
  name: string;
}

/** The annotations of a tool's input schema, or why they make the tool unusable. */
export type McpParamHeaderScan = { ok: true; headers: McpParamHeader[] } | { ok: false; reason: string };

/**
 * How the client reads annotations: only a single type string counts, and values of keywords
 * that hold data rather than subschemas are not searched (an annotation-like key there means
 * nothing).
 */
const CLIENT_RULES: ParamAnnotationRules = {
  typeArrays: false,
  dataKeywords: new Set(['const', 'enum', 'default', 'examples', X_MCP_HEADER]),
};

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function problemOf(annotation: ParamAnnotation): string | null {
  const { path, name } = annotation;
  const where = path.length ? `"${path.join('.')}"` : 'the schema root';
  if (!annotation.reachable) return `${X_MCP_HEADER} on ${where} is not reachable through "properties" alone`;
  if (typeof name !== 'string' || name === '') return `${X_MCP_HEADER} of ${where} is empty or not a string`;
  if (!annotation.tokenName) return `${X_MCP_HEADER} ${JSON.stringify(name)} of ${where} is not an HTTP header token`;
  if (annotation.declaredType === 'number')
    return `${X_MCP_HEADER} ${JSON.stringify(name)} is on ${where} of type number, which is not allowed`;
  if (!annotation.type)
    return `${X_MCP_HEADER} ${JSON.stringify(name)} is on ${where}, which is not of type string, integer or boolean`;
  const other = annotation.duplicateOf;
  if (other)
    return `${X_MCP_HEADER} ${JSON.stringify(name)} of ${where} duplicates that of "${other.path.join('.')}" (names are case-insensitive)`;
  return null;
}

/**
 * Reads the `x-mcp-header` annotations of an input schema and checks them against the rules of
 * the Streamable HTTP transport: a non-empty token, unique regardless of case, on a `string`,
 * `integer` or `boolean` property reached from the root through `properties` keys only (never
 * through `items`, composition, conditionals or `$ref`). Every broken annotation is reported.
 */
export function scanParamHeaders(inputSchema: unknown): McpParamHeaderScan {
  const headers: McpParamHeader[] = [];
  const problems: string[] = [];
  for (const annotation of findParamAnnotations(inputSchema, CLIENT_RULES)) {
    const problem = problemOf(annotation);
    if (problem) problems.push(problem);
    else headers.push({ path: annotation.path, name: annotation.name as string });
  }
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
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
      out[`Mcp-Param-${header.name}`] = String(value);
  }
  return out;
}

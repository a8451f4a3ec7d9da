import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { decodeHeaderValue } from '../../protocol/stateless';
import type { Toolset } from '../toolset';
import type { RegisteredTool } from '../tools/registered-tool';
import type { HeaderReader } from './stateless-headers';
import { headerMismatch, type StatelessRejection } from './stateless-rejection';

/** The schema keyword that mirrors a tool parameter into an `Mcp-Param-{name}` header. */
export const MCP_HEADER_KEYWORD = 'x-mcp-header';

/** The types a mirrored parameter may have. */
export type McpParamType = 'string' | 'integer' | 'boolean';

/** One tool parameter mirrored into an `Mcp-Param-{name}` header. */
export interface McpParamHeader {
  /** The `{name}` part of the header, as the schema spells it. */
  name: string;
  /** The chain of `properties` keys from the schema root to the parameter. */
  path: readonly string[];
  type: McpParamType;
}

/** An `x-mcp-header` annotation that breaks the specification's constraints. */
export class McpParamHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpParamHeaderError';
  }
}

/** RFC 9110 `token` (`1*tchar`): what a header field name may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRIMITIVES: readonly string[] = ['string', 'integer', 'boolean'];

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function pointer(path: readonly string[]): string {
  return path.length ? `/${path.map((step) => step.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}` : '(root)';
}

function primitiveType(schema: Record<string, unknown>, at: string): McpParamType {
  const declared = Array.isArray(schema.type) ? schema.type.filter((type) => type !== 'null') : [schema.type];
  if (declared.length === 1 && PRIMITIVES.includes(declared[0] as string)) return declared[0] as McpParamType;
  const shown = JSON.stringify(schema.type ?? null);
  throw new McpParamHeaderError(`the property at ${at} has type ${shown}; x-mcp-header needs "string", "integer" or "boolean" (not "number")`);
}

/**
 * The parameters a tool's input schema mirrors into headers. Throws `McpParamHeaderError` when
 * an annotation breaks a constraint of the specification: an empty name or one that is not an
 * HTTP token, names equal ignoring case, a type other than string, integer or boolean, or an
 * annotation not reachable from the root through `properties` keys alone (under `items`,
 * `oneOf`, `if`, `$ref`... or on the root itself).
 */
export function mcpParamHeadersOf(schema: Record<string, unknown>): McpParamHeader[] {
  const found: McpParamHeader[] = [];
  const walk = (node: unknown, path: string[], reachable: boolean, location: string[]): void => {
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, path, false, [...location, String(index)]));
    if (!isObject(node)) return;
    if (MCP_HEADER_KEYWORD in node) {
      const at = pointer(location);
      if (!reachable || path.length === 0) {
        throw new McpParamHeaderError(`the x-mcp-header at ${at} is not on a property reachable from the root through "properties" alone`);
      }
      const name = node[MCP_HEADER_KEYWORD];
      if (typeof name !== 'string' || !TOKEN.test(name)) {
        throw new McpParamHeaderError(`the x-mcp-header at ${at} is ${JSON.stringify(name)}; it must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_\`|~)`);
      }
      const twin = found.find((other) => other.name.toLowerCase() === name.toLowerCase());
      if (twin) throw new McpParamHeaderError(`the x-mcp-header "${name}" at ${at} repeats "${twin.name}" of the property at arguments${pointer(twin.path)} (names are compared ignoring case)`);
      found.push({ name, path: [...path], type: primitiveType(node, at) });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && isObject(value)) {
        for (const [property, child] of Object.entries(value)) walk(child, [...path, property], reachable, [...location, key, property]);
      } else if (value && typeof value === 'object') {
        walk(value, path, false, [...location, key]);
      }
    }
  };
  walk(schema, [], true, []);
  return found;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const step of path) value = isObject(value) ? value[step] : undefined;
  return value;
}

function matches(decoded: string, value: unknown, type: McpParamType): boolean {
  if (type === 'integer' && typeof value === 'number') return decoded.trim() !== '' && Number(decoded) === value;
  return decoded === String(value);
}

const cache = new WeakMap<RegisteredTool, McpParamHeader[]>();

function headersOf(tool: RegisteredTool): McpParamHeader[] {
  let headers = cache.get(tool);
  if (!headers) {
    const schema = tool.definition.inputSchema;
    headers = isObject(schema) ? mcpParamHeadersOf(schema) : [];
    cache.set(tool, headers);
  }
  return headers;
}

/**
 * Checks the `Mcp-Param-{name}` headers of a stateless `tools/call` against its arguments: a
 * parameter present in the body needs its header, with the same value once the Base64 sentinel
 * is decoded (integers compare as numbers); a header without a body value, or a malformed one,
 * is refused too. Null when the request is fine (or names no known tool: the call fails later).
 */
export function checkParamHeaders(toolset: Toolset, request: JsonRpcRequest, header: HeaderReader): StatelessRejection | null {
  const name = request.params?.name;
  const tool = typeof name === 'string' ? toolset.get(name) : undefined;
  if (!tool) return null;
  for (const param of headersOf(tool)) {
    const headerName = `Mcp-Param-${param.name}`;
    const raw = header(headerName.toLowerCase());
    const value = valueAt(request.params?.arguments, param.path);
    const present = value !== undefined && value !== null;
    if (raw === undefined) {
      if (present) return headerMismatch(`the ${headerName} header is required: arguments${pointer(param.path)} is set`);
      continue;
    }
    const decoded = decodeHeaderValue(raw);
    if (decoded === null) return headerMismatch(`the ${headerName} header value is malformed`);
    if (!present) return headerMismatch(`${headerName} header value '${decoded}' has no counterpart: arguments${pointer(param.path)} is not set`);
    if (!matches(decoded, value, param.type)) return headerMismatch(`${headerName} header value '${decoded}' does not match body value '${String(value)}'`);
  }
  return null;
}

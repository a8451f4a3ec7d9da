import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import {
  findParamAnnotations,
  X_MCP_HEADER,
  type McpParamType,
  type ParamAnnotationRules,
} from '../../protocol/param-header-annotations';
import { decodeHeaderValue } from '../../protocol/stateless';
import type { Toolset } from '../dispatch/toolset';
import type { RegisteredTool } from '../tools/registered-tool';
import type { HeaderReader } from './stateless-headers';
import { headerMismatch, type StatelessRejection } from './stateless-rejection';

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

/**
 * How the server reads annotations: a nullable type (`["integer", "null"]`) counts as its
 * header type, and every keyword is searched, so an annotation inside `default` or `enum` data
 * refuses the tool like any unreachable one.
 */
const SERVER_RULES: ParamAnnotationRules = { typeArrays: true, dataKeywords: new Set() };

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function pointer(path: readonly string[]): string {
  return path.length ? `/${path.map((step) => step.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}` : '(root)';
}

/**
 * The parameters a tool's input schema mirrors into headers. Throws `McpParamHeaderError` for the
 * first annotation (in document order) that breaks a constraint of the specification: one not
 * reachable from the root through `properties` keys alone (under `items`, `oneOf`, `if`,
 * `$ref`... or on the root itself), an empty name or one that is not an HTTP token, names equal
 * ignoring case, or a type other than string, integer or boolean.
 */
export function mcpParamHeadersOf(schema: Record<string, unknown>): McpParamHeader[] {
  const annotations = findParamAnnotations(schema, SERVER_RULES);
  for (const annotation of annotations) {
    const at = pointer(annotation.location);
    if (!annotation.reachable)
      throw new McpParamHeaderError(
        `the ${X_MCP_HEADER} at ${at} is not on a property reachable from the root through "properties" alone`,
      );
    if (!annotation.tokenName) {
      throw new McpParamHeaderError(
        `the ${X_MCP_HEADER} at ${at} is ${JSON.stringify(annotation.name)}; it must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_\`|~)`,
      );
    }
    const twin = annotation.duplicateOf;
    if (twin)
      throw new McpParamHeaderError(
        `the ${X_MCP_HEADER} "${String(annotation.name)}" at ${at} repeats "${String(twin.name)}" of the property at arguments${pointer(twin.path)} (names are compared ignoring case)`,
      );
    if (!annotation.type) {
      const shown = JSON.stringify(annotation.declaredType ?? null);
      throw new McpParamHeaderError(
        `the property at ${at} has type ${shown}; ${X_MCP_HEADER} needs "string", "integer" or "boolean" (not "number")`,
      );
    }
  }
  return annotations.map(({ name, path, type }) => ({ name: name as string, path, type: type as McpParamType }));
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
export function checkParamHeaders(
  toolset: Toolset,
  request: JsonRpcRequest,
  header: HeaderReader,
): StatelessRejection | null {
  const name = request.params?.name;
  const tool = typeof name === 'string' ? toolset.get(name) : undefined;
  if (!tool) return null;
  for (const param of headersOf(tool)) {
    const headerName = `Mcp-Param-${param.name}`;
    const raw = header(headerName.toLowerCase());
    const value = valueAt(request.params?.arguments, param.path);
    const present = value !== undefined && value !== null;
    if (raw === undefined) {
      if (present)
        return headerMismatch(`the ${headerName} header is required: arguments${pointer(param.path)} is set`);
      continue;
    }
    const decoded = decodeHeaderValue(raw);
    if (decoded === null) return headerMismatch(`the ${headerName} header value is malformed`);
    if (!present)
      return headerMismatch(
        `${headerName} header value '${decoded}' has no counterpart: arguments${pointer(param.path)} is not set`,
      );
    if (!matches(decoded, value, param.type))
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the body value is a JSON primitive here; String() writes it as the header would
      return headerMismatch(`${headerName} header value '${decoded}' does not match body value '${String(value)}'`);
  }
  return null;
}

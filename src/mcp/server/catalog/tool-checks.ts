import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { JsonSchema, McpToolSchema } from '../../interfaces/mcp-tool-options.interface';
import type { McpStandardSchema } from '../../interfaces/standard-schema.interface';
import {
  invalidMcpHeaderMessage,
  invalidSchemaMessage,
  jsonSchemaWithoutStandardSchemaMessage,
  standardSchemaWithoutJsonSchemaMessage,
} from '../../mcp.messages';
import { SCOPE_TOKEN } from '../config/mcp-oauth.options';
import { McpParamHeaderError, mcpParamHeadersOf } from '../stateless/mcp-param-headers';
import { compileJsonSchema, type CompiledValidator } from '../tools/json-schema-validator';
import {
  compileStandardValidator,
  isStandardSchema,
  standardJsonSchema,
  StandardJsonSchemaError,
} from '../tools/standard-schema';
import { isDtoClass, toPublishedSchema } from '../tools/tool-schema.factory';

/** Which of a tool's two schemas a check is about, as its message says. */
export type SchemaRole = 'input' | 'output';

/** Compiles a published schema, turning a compiler failure into the tool's configuration error. */
export function compiledSchema(schema: JsonSchema, owner: string, which: SchemaRole): CompiledValidator {
  try {
    return compileJsonSchema(schema);
  } catch (error) {
    throw new McpConfigurationError(invalidSchemaMessage(owner, which, (error as Error).message));
  }
}

/**
 * The JSON Schema published for a Standard Schema: `explicit` when the tool gives one, else the
 * library's conversion of the values it accepts (input) or produces (output).
 */
function standardPublishedSchema(
  declared: McpStandardSchema,
  explicit: JsonSchema | undefined,
  owner: string,
  which: SchemaRole,
): JsonSchema {
  if (explicit) return explicit;
  try {
    return standardJsonSchema(declared, which);
  } catch (error) {
    if (error instanceof StandardJsonSchemaError)
      throw new McpConfigurationError(standardSchemaWithoutJsonSchemaMessage(owner, which, error.message));
    throw error;
  }
}

/**
 * The schema a tool publishes for `declared` (a DTO class, a JSON Schema, a Standard Schema, or
 * nothing; `explicit` is its `inputJsonSchema` or `outputJsonSchema`). Its root must be an object,
 * as `tools/list` requires; a written JSON Schema is compiled once here so a typo fails when the
 * tool is added, not on its first call (a DTO's schema is generated, a Standard Schema's is only
 * published: its library validates).
 */
export function checkedToolSchema(
  declared: McpToolSchema | undefined,
  owner: string,
  which: SchemaRole,
  explicit?: JsonSchema,
): JsonSchema {
  const standard = isStandardSchema(declared);
  if (explicit !== undefined && !standard)
    throw new McpConfigurationError(jsonSchemaWithoutStandardSchemaMessage(owner, which));
  const schema = standard ? standardPublishedSchema(declared, explicit, owner, which) : toPublishedSchema(declared);
  if (schema.type !== 'object') {
    throw new McpConfigurationError(
      invalidSchemaMessage(owner, which, `its root type is ${JSON.stringify(schema.type)}, not "object"`),
    );
  }
  if (declared && !isDtoClass(declared) && (!standard || explicit)) compiledSchema(schema, owner, which);
  return schema;
}

/**
 * The validator of a tool's structured output: a Standard Schema's own, else the published
 * JSON Schema's (a DTO's schema is derived, so output is checked against that schema).
 */
export function compiledOutputValidator(
  declared: McpToolSchema,
  published: JsonSchema,
  owner: string,
): CompiledValidator {
  return isStandardSchema(declared) ? compileStandardValidator(declared) : compiledSchema(published, owner, 'output');
}

/**
 * Refuses `x-mcp-header` annotations a client would reject: such a tool could never be called
 * over the stateless revision, so it is refused when added rather than failing every call.
 */
export function checkParamHeaders(schema: JsonSchema, owner: string, tool: string): void {
  try {
    mcpParamHeadersOf(schema);
  } catch (error) {
    if (error instanceof McpParamHeaderError)
      throw new McpConfigurationError(invalidMcpHeaderMessage(owner, tool, error.message));
    throw error;
  }
}

/** The `scopes` of a tool: scope names only, as they go into a challenge header; duplicates dropped. */
export function checkedToolScopes(scopes: unknown, owner: string): readonly string[] {
  if (scopes === undefined) return [];
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))) {
    throw new McpConfigurationError(
      `@McpTool on ${owner}: scopes must be an array of scope names (printable ASCII without spaces, quotes or backslashes), got ${JSON.stringify(scopes)}`,
    );
  }
  return Object.freeze([...new Set(scopes as string[])]);
}

/** The `roles` of a tool: non-empty strings; duplicates dropped. */
export function checkedToolRoles(roles: unknown, owner: string): readonly string[] {
  if (roles === undefined) return [];
  if (!Array.isArray(roles) || roles.some((role) => typeof role !== 'string' || !role)) {
    throw new McpConfigurationError(
      `@McpTool on ${owner}: roles must be an array of role names, got ${JSON.stringify(roles)}`,
    );
  }
  return Object.freeze([...new Set(roles as string[])]);
}

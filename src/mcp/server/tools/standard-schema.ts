import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';
import type { McpStandardSchema, McpStandardSchemaResult } from '../../interfaces/standard-schema.interface';
import type { CompiledValidator } from './json-schema-validator';
import { validationMessage } from './validation-report';

/** One issue of a failed validation. */
type McpStandardSchemaIssue = Extract<McpStandardSchemaResult<unknown>, { issues: unknown }>['issues'][number];

/** The JSON Schema dialect asked of a Standard JSON Schema conversion: MCP's default. */
const JSON_SCHEMA_TARGET = 'draft-2020-12';

/**
 * True when `value` is a Standard Schema of version 1. Checked by shape, with no library loaded:
 * an ArkType type is a function, so this check goes before the one for a DTO class.
 */
export function isStandardSchema(value: unknown): value is McpStandardSchema {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    !!props &&
    typeof props === 'object' &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/** Why a Standard Schema has no JSON Schema to publish: the reason a boot error gives. */
export class StandardJsonSchemaError extends Error {}

/**
 * The JSON Schema of the values `schema` accepts (`input`) or produces (`output`), from the
 * library's own Standard JSON Schema conversion. Throws `StandardJsonSchemaError` when the library
 * has none, or when it refuses this schema (Zod refuses a `z.date()` or an output transform).
 */
export function standardJsonSchema(schema: McpStandardSchema, side: 'input' | 'output'): JsonSchema {
  const props = schema['~standard'];
  const convert = props.jsonSchema?.[side];
  if (typeof convert !== 'function') {
    throw new StandardJsonSchemaError(
      `the ${props.vendor} schema offers no Standard JSON Schema (~standard.jsonSchema)`,
    );
  }
  let converted: unknown;
  try {
    converted = convert({ target: JSON_SCHEMA_TARGET });
  } catch (error) {
    throw new StandardJsonSchemaError(
      `the ${props.vendor} schema cannot be converted to JSON Schema: ${(error as Error)?.message ?? String(error)}`,
    );
  }
  if (!converted || typeof converted !== 'object' || Array.isArray(converted)) {
    throw new StandardJsonSchemaError(
      `the ${props.vendor} schema converted to ${JSON.stringify(converted)}, not a JSON Schema object`,
    );
  }
  return converted as JsonSchema;
}

function pathOf(issue: McpStandardSchemaIssue): string {
  const keys = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' && segment !== null ? segment.key : segment),
  );
  return keys.length ? keys.join('.') : '(root)';
}

function* describeIssues(issues: ReadonlyArray<McpStandardSchemaIssue>): Generator<string> {
  for (const issue of issues) yield `${pathOf(issue)}: ${issue.message}`;
}

/**
 * The validator of a Standard Schema: its `validate` (which may answer a promise), its parsed
 * value on success, and on failure the issues as `path: message` in the bounded message every
 * validator of the library gives (`validationMessage`).
 */
export function compileStandardValidator(schema: McpStandardSchema): CompiledValidator {
  const props = schema['~standard'];
  const outcome = (result: Awaited<ReturnType<typeof props.validate>>) =>
    result.issues
      ? { ok: false as const, message: validationMessage(describeIssues(result.issues)) }
      : { ok: true as const, value: result.value };
  return (value) => {
    const result = props.validate(value);
    return typeof (result as PromiseLike<unknown>).then === 'function'
      ? Promise.resolve(result).then(outcome)
      : outcome(result as Awaited<typeof result>);
  };
}

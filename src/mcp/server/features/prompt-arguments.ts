import type { Type } from '@nestjs/common';
import type { McpPromptArgument } from '../../interfaces/mcp-prompt-options.interface';
import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';
import type { McpStandardSchema } from '../../interfaces/standard-schema.interface';
import type { CompiledValidator } from '../tools/json-schema-validator';
import {
  compileStandardValidator,
  isStandardSchema,
  standardJsonSchema,
  StandardJsonSchemaError,
} from '../tools/standard-schema';
import { compileInputValidator, dtoToJsonSchema, isDtoClass } from '../tools/tool-schema.factory';

/** The arguments of a prompt as published, and how `prompts/get` arguments are checked. */
export interface PromptArgumentsSpec {
  /** Published in `prompts/list`. */
  arguments: McpPromptArgument[];
  /** Validates (and for a DTO, transforms) the arguments of one `prompts/get`. */
  validate: CompiledValidator;
}

/** The arguments an object schema describes: its properties, required as it says. */
function fromObjectSchema(schema: JsonSchema): McpPromptArgument[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    ...(typeof property.title === 'string' ? { title: property.title } : {}),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    required: required.has(name),
  }));
}

/**
 * The JSON Schema of a Standard Schema of prompt arguments: an object whose properties are
 * strings (a property of another type could never be given). Throws `StandardJsonSchemaError`.
 */
function stringsSchema(declared: McpStandardSchema): JsonSchema {
  const schema = standardJsonSchema(declared, 'input');
  if (schema.type !== 'object')
    throw new StandardJsonSchemaError(`its root type is ${JSON.stringify(schema.type)}, not "object"`);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const typed = Object.entries(properties).filter(
    ([, property]) => property.type !== undefined && property.type !== 'string',
  );
  if (typed.length) {
    const [name, property] = typed[0];
    throw new StandardJsonSchemaError(
      `the argument ${name} is of type ${JSON.stringify(property.type)}: prompt arguments are strings`,
    );
  }
  return schema;
}

function checkShape(
  value: unknown,
  declared: McpPromptArgument[],
): { ok: true; value: Record<string, string> } | { ok: false; message: string } {
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value))
    return { ok: false, message: 'arguments must be an object of strings' };
  const args = value as Record<string, unknown>;
  const notStrings = Object.keys(args).filter((name) => typeof args[name] !== 'string');
  if (notStrings.length) return { ok: false, message: `argument values must be strings (${notStrings.join(', ')})` };
  const missing = declared.filter((arg) => arg.required && args[arg.name] === undefined).map((arg) => arg.name);
  if (missing.length)
    return { ok: false, message: `missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` };
  return { ok: true, value: args as Record<string, string> };
}

/**
 * Builds the published arguments and the validator of a prompt. Argument values are strings,
 * as the protocol defines them; every required argument must be present. A DTO's or a Standard
 * Schema's own rules run after that, and the handler receives the DTO instance or the schema's
 * parsed value. A Standard Schema's arguments are the properties of its Standard JSON Schema
 * input conversion, which throws `StandardJsonSchemaError` for a library without one.
 */
export function compilePromptArguments(
  declared: McpPromptArgument[] | Type<unknown> | McpStandardSchema | undefined,
): PromptArgumentsSpec {
  if (isStandardSchema(declared) || isDtoClass(declared)) {
    const standard = isStandardSchema(declared);
    const published = fromObjectSchema(standard ? stringsSchema(declared) : dtoToJsonSchema(declared));
    const ownRules = standard ? compileStandardValidator(declared) : compileInputValidator(declared);
    return {
      arguments: published,
      validate: async (value) => {
        const shape = checkShape(value, published);
        return shape.ok ? ownRules(shape.value) : shape;
      },
    };
  }
  const published = (declared ?? []).map((arg) => ({ ...arg }));
  return { arguments: published, validate: (value) => checkShape(value, published) };
}

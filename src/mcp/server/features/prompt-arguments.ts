import type { Type } from '@nestjs/common';
import type { McpPromptArgument } from '../../interfaces/mcp-prompt-options.interface';
import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';
import type { CompiledValidator } from '../tools/json-schema-validator';
import { compileInputValidator, dtoToJsonSchema, isDtoClass } from '../tools/tool-schema.factory';

/** The arguments of a prompt as published, and how `prompts/get` arguments are checked. */
export interface PromptArgumentsSpec {
  /** Published in `prompts/list`. */
  arguments: McpPromptArgument[];
  /** Validates (and for a DTO, transforms) the arguments of one `prompts/get`. */
  validate: CompiledValidator;
}

function fromDto(dto: Type<unknown>): McpPromptArgument[] {
  const schema = dtoToJsonSchema(dto);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    ...(typeof property.title === 'string' ? { title: property.title } : {}),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    required: required.has(name),
  }));
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
 * as the protocol defines them; every required argument must be present. A DTO's own rules run
 * after that, and the handler receives the DTO instance.
 */
export function compilePromptArguments(declared: McpPromptArgument[] | Type<unknown> | undefined): PromptArgumentsSpec {
  if (isDtoClass(declared)) {
    const published = fromDto(declared);
    const dtoValidator = compileInputValidator(declared);
    return {
      arguments: published,
      validate: async (value) => {
        const shape = checkShape(value, published);
        return shape.ok ? dtoValidator(shape.value) : shape;
      },
    };
  }
  const published = (declared ?? []).map((arg) => ({ ...arg }));
  return { arguments: published, validate: (value) => checkShape(value, published) };
}

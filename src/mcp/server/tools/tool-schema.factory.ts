import type { Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';
import { compileJsonSchema, type CompiledValidator } from './json-schema.validator';

// class-transformer keeps `@Type(() => Nested)` in this storage; class-validator-jsonschema needs
// it to follow nested DTOs.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage');

/** The schema published for a tool that takes no arguments. */
export const EMPTY_INPUT_SCHEMA: JsonSchema = Object.freeze({ type: 'object', additionalProperties: false }) as JsonSchema;

const DEFS_PREFIX = '#/$defs/';

/** True when `value` is a class (a DTO) rather than a schema object. */
export function isDtoClass(value: unknown): value is Type<unknown> {
  return typeof value === 'function';
}

function collectRefs(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    node.forEach((item) => collectRefs(item, into));
  } else if (node && typeof node === 'object') {
    for (const [key, child] of Object.entries(node)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(DEFS_PREFIX)) {
        into.add(child.slice(DEFS_PREFIX.length));
      } else {
        collectRefs(child, into);
      }
    }
  }
}

/**
 * Derives a self-contained JSON Schema from a class-validator DTO: the class's own schema with
 * every nested DTO it references under `$defs`.
 */
export function dtoToJsonSchema(dto: Type<unknown>): JsonSchema {
  const all = validationMetadatasToSchemas({
    refPointerPrefix: DEFS_PREFIX,
    classTransformerMetadataStorage: defaultMetadataStorage,
  }) as Record<string, JsonSchema>;
  const root: JsonSchema = { type: 'object', properties: {}, ...(all[dto.name] ?? {}) };
  const defs: Record<string, JsonSchema> = {};
  const pending = new Set<string>();
  collectRefs(root, pending);
  for (const name of pending) {
    if (defs[name] || !all[name]) continue;
    defs[name] = all[name];
    collectRefs(all[name], pending);
  }
  return Object.keys(defs).length ? { ...root, $defs: defs } : root;
}

function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((text) => `${path}: ${text}`);
    return own.concat(describeValidationErrors(error.children ?? [], path));
  });
}

/**
 * Compiles the argument validator of a tool: DTO classes through class-validator (arguments
 * become an instance of the DTO, unknown properties are stripped), schemas through Ajv.
 */
export function compileInputValidator(input: Type<unknown> | JsonSchema | undefined): CompiledValidator {
  if (!input) {
    return (value) => ({ ok: true, value: value ?? {} });
  }
  if (!isDtoClass(input)) {
    return compileJsonSchema(input);
  }
  return async (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, message: '(root): must be an object' };
    }
    const instance = plainToInstance(input, value) as object;
    const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
    return errors.length ? { ok: false, message: describeValidationErrors(errors).join('; ') } : { ok: true, value: instance };
  };
}

/** The JSON Schema published for an input or output declaration. */
export function toPublishedSchema(declared: Type<unknown> | JsonSchema | undefined): JsonSchema {
  if (!declared) return EMPTY_INPUT_SCHEMA;
  return isDtoClass(declared) ? dtoToJsonSchema(declared) : declared;
}

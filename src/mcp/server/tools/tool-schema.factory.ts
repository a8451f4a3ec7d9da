import type { Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, type ValidationError } from 'class-validator';
import { targetConstructorToSchema, validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { JsonSchema, McpToolSchema } from '../../interfaces/mcp-tool-options.interface';
import { compileDtoFastPath } from './dto-fast-path';
import { compileJsonSchema, type CompiledValidator, type ValidationOutcome } from './json-schema-validator';
import { compileStandardValidator, isStandardSchema } from './standard-schema';
import { validationMessage } from './validation-report';

// class-transformer keeps `@Type(() => Nested)` in this storage; class-validator-jsonschema needs
// it to follow nested DTOs.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a deep path with no typings of its own
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: import('class-transformer/types/MetadataStorage').MetadataStorage;
};

/** The schema published for a tool that takes no arguments. */
export const EMPTY_INPUT_SCHEMA: JsonSchema = Object.freeze({ type: 'object', additionalProperties: false });

const DEFS_PREFIX = '#/$defs/';

/** True when `value` is a class (a DTO) rather than a schema object (an ArkType type is a function too, and no DTO). */
export function isDtoClass(value: unknown): value is Type<unknown> {
  return typeof value === 'function' && !isStandardSchema(value);
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

/** Names shared by more than one validated class: their nested schemas cannot be told apart. */
function ambiguousClassNames(): Set<string> {
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<object, unknown> | { target: object }[];
  };
  const targets =
    storage.validationMetadatas instanceof Map
      ? [...storage.validationMetadatas.keys()]
      : storage.validationMetadatas.map((m) => m.target);
  const byName = new Map<string, Set<object>>();
  for (const target of targets) {
    if (typeof target !== 'function') continue;
    byName.set(target.name, (byName.get(target.name) ?? new Set()).add(target));
  }
  return new Set([...byName].filter(([, set]) => set.size > 1).map(([name]) => name));
}

/** The definition of a nested class without validation decorators: any object, as class-validator accepts it. */
const UNDECORATED_CLASS_SCHEMA: JsonSchema = Object.freeze({ type: 'object' });

/**
 * Derives a self-contained JSON Schema from a class-validator DTO: the class's own schema with
 * every nested DTO it references under `$defs`. Nested DTOs are referenced by class name, so two
 * nested DTO classes of one name are a boot error. A nested class without validation decorators
 * is defined as `{ type: 'object' }`: class-validator accepts any object there (and `whitelist`
 * strips its undecorated properties), so the published schema promises no more than that.
 */
export function dtoToJsonSchema(dto: Type<unknown>): JsonSchema {
  const options = { refPointerPrefix: DEFS_PREFIX, classTransformerMetadataStorage: defaultMetadataStorage };
  const all = validationMetadatasToSchemas(options) as Record<string, JsonSchema>;
  const own = targetConstructorToSchema(dto, options) as JsonSchema;
  const root: JsonSchema = { type: 'object', properties: {}, ...own };
  const defs: Record<string, JsonSchema> = {};
  const pending = new Set<string>();
  collectRefs(root, pending);
  const ambiguous = pending.size ? ambiguousClassNames() : new Set<string>();
  for (const name of pending) {
    if (ambiguous.has(name)) {
      throw new McpConfigurationError(
        `The DTO ${dto.name} nests a class named ${name}, and more than one validated class has that name: rename one of them so its JSON Schema is unambiguous.`,
      );
    }
    const schema = all[name];
    if (!schema) {
      defs[name] = { ...UNDECORATED_CLASS_SCHEMA };
      continue;
    }
    defs[name] = schema;
    collectRefs(schema, pending);
  }
  return Object.keys(defs).length ? { ...root, $defs: defs } : root;
}

function* describeValidationErrors(errors: ValidationError[], parent = ''): Generator<string> {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    for (const text of Object.values(error.constraints ?? {})) yield `${path}: ${text}`;
    yield* describeValidationErrors(error.children ?? [], path);
  }
}

/**
 * Compiles the argument validator of a tool: DTO classes through class-validator (arguments
 * become an instance of the DTO, unknown properties are stripped), Standard Schemas through their
 * own `validate` (arguments become its parsed value), JSON Schemas through Ajv. Either way a
 * failing value gets a bounded message (`validationMessage`).
 */
export function compileInputValidator(input: McpToolSchema | undefined): CompiledValidator {
  if (!input) {
    return (value) => ({ ok: true, value: value ?? {} });
  }
  if (isStandardSchema(input)) return compileStandardValidator(input);
  if (!isDtoClass(input)) {
    return compileJsonSchema(input);
  }
  const fast = compileDtoFastPath(input);
  const full = async (value: object): Promise<ValidationOutcome> => {
    const instance = plainToInstance(input, value) as object;
    const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
    return errors.length
      ? { ok: false, message: validationMessage(describeValidationErrors(errors)) }
      : { ok: true, value: instance };
  };
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, message: '(root): must be an object' };
    }
    let instance: object | null = null;
    try {
      instance = fast ? fast(value as Record<string, unknown>) : null;
    } catch {
      // A constructor or validator that throws: the full path throws it again, as a rejection.
    }
    return instance ? { ok: true, value: instance } : full(value);
  };
}

/** The JSON Schema published for an input or output declaration. */
export function toPublishedSchema(declared: Type<unknown> | JsonSchema | undefined): JsonSchema {
  if (!declared) return EMPTY_INPUT_SCHEMA;
  return isDtoClass(declared) ? dtoToJsonSchema(declared) : declared;
}

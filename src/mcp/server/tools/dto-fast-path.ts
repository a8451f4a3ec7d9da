import type { Type } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

// The storage class-transformer keeps its decorators in (`@Type`, `@Transform`, `@Expose`, `@Exclude`).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a deep path with no typings of its own
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: import('class-transformer/types/MetadataStorage').MetadataStorage;
};

/** class-transformer's `TransformationType.PLAIN_TO_CLASS`. */
const PLAIN_TO_CLASS = 0;

/** One validator of a property, with the constraint instances class-validator would call. */
interface CompiledCheck {
  metadata: ValidationMetadata;
  validators: { validate(value: unknown, args: ValidationArguments): unknown }[];
}

/** A validated property of the DTO, in the order class-validator visits it. */
interface CompiledProperty {
  name: string;
  /** `@IsOptional`, `@ValidateIf`: every one is evaluated, like class-validator does, then combined. */
  conditions: ((object: object, value: unknown) => boolean)[];
  /** `@IsDefined`: run after the conditions, before the other validators. */
  defined: CompiledCheck[];
  /** Every other validator (`@IsString`, `@MaxLength`, a `registerDecorator` one, ...). */
  checks: CompiledCheck[];
}

/** The validation metadata types the shortcut runs itself; any other (nested, promise) leaves the DTO to the full path. */
const HANDLED_TYPES = new Set<string>([
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.IS_DEFINED,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.WHITELIST,
]);

/**
 * The shortcut's plan for a DTO, or null when the DTO needs the full path: class-transformer has
 * a decorator for it, a validated property is an accessor or a method of its prototype, or a
 * property validates nested objects or promises.
 */
function planOf(dto: Type<unknown>): { allowed: Set<string>; properties: CompiledProperty[] } | null {
  const storage = getMetadataStorage();
  // The same query `validate(instance, { whitelist: true, forbidUnknownValues: false })` makes.
  const metadatas = storage.getTargetValidationMetadatas(dto, undefined as unknown as string, false, false, undefined);
  if (!metadatas.length || metadatas.some((m) => !HANDLED_TYPES.has(m.type))) return null;
  if (defaultMetadataStorage.getExposedMetadatas(dto).length) return null;
  if (defaultMetadataStorage.getExcludedMetadatas(dto).length) return null;
  const grouped = storage.groupByPropertyName(metadatas);
  const names = Object.keys(grouped);
  for (const name of names) {
    if (name === '__proto__' || name === 'constructor') return null;
    if (defaultMetadataStorage.findTypeMetadata(dto, name)) return null;
    if (defaultMetadataStorage.findTransformMetadatas(dto, name, PLAIN_TO_CLASS).length) return null;
    for (let proto = dto.prototype as object | null; proto && proto !== Object.prototype;) {
      if (Object.getOwnPropertyDescriptor(proto, name)) return null;
      proto = Object.getPrototypeOf(proto) as object | null;
    }
  }
  const compile = (metadata: ValidationMetadata): CompiledCheck => ({
    metadata,
    validators: storage.getTargetValidatorConstraints(metadata.constraintCls).map((constraint) => constraint.instance),
  });
  const properties = names.map((name) => {
    const all = grouped[name];
    return {
      name,
      conditions: all
        .filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION)
        .map((m) => m.constraints[0] as (object: object, value: unknown) => boolean),
      defined: all.filter((m) => m.type === ValidationTypes.IS_DEFINED).map(compile),
      checks: all.filter((m) => m.type === ValidationTypes.CUSTOM_VALIDATION).map(compile),
    };
  });
  return { allowed: new Set(names), properties };
}

/** Runs `checks` on `value` like class-validator does; false as soon as one fails or answers with a promise. */
function passes(instance: object, value: unknown, checks: CompiledCheck[]): boolean {
  for (const { metadata, validators } of checks) {
    for (const validator of validators) {
      const args: ValidationArguments = {
        targetName: instance.constructor ? instance.constructor.name : (undefined as unknown as string),
        property: metadata.propertyName,
        object: instance,
        value,
        constraints: metadata.constraints,
      };
      const verdict = validator.validate(value, args);
      if (!verdict || (typeof verdict === 'object' && typeof (verdict as Promise<unknown>).then === 'function')) {
        return false;
      }
    }
  }
  return true;
}

/**
 * The shortcut for the common call of a DTO tool: arguments whose every key is a validated
 * property of the DTO and whose every value is a JSON primitive (string, number, boolean, null).
 * For those, `plainToInstance` makes `new Dto()` and copies the values, and `validate` with
 * `whitelist: true` strips the instance's other own properties and runs each property's
 * validators: this does the same with what class-validator registered for the DTO (the same
 * constraint instances, the same arguments, every condition evaluated), without the lookups,
 * the executor objects and the promise class-validator makes per call.
 *
 * It returns the instance when every validator said yes synchronously, and null otherwise (a
 * failure, an async validator, an extra key, a nested value, a DTO the shortcut does not cover):
 * the caller then takes the full path, which gives the error its message (a failing value's
 * validators and conditions run twice). Null for the DTO itself when the shortcut never applies.
 */
export function compileDtoFastPath(dto: Type<unknown>): ((value: Record<string, unknown>) => object | null) | null {
  const plan = planOf(dto);
  if (!plan) return null;
  const { allowed, properties } = plan;
  return (value) => {
    const instance = new dto() as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      if (!allowed.has(key)) return null;
      const item = value[key];
      if ((item !== null && typeof item === 'object') || typeof item === 'function') return null;
      instance[key] = item;
    }
    for (const key of Object.keys(instance)) if (!allowed.has(key)) delete instance[key];
    for (const property of properties) {
      const current = instance[property.name];
      let applies = true;
      for (const condition of property.conditions) applies = condition(instance, current) && applies;
      if (!applies) continue;
      if (!passes(instance, current, property.defined) || !passes(instance, current, property.checks)) return null;
    }
    return instance;
  };
}

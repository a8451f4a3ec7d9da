import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';

/** Result of a validation: the (possibly transformed) value, or what is wrong with it. */
export type ValidationOutcome<T = unknown> = { ok: true; value: T } | { ok: false; message: string };

/** A compiled validator; compiled once at boot, run per call. */
export type CompiledValidator<T = unknown> = (value: unknown) => ValidationOutcome<T> | Promise<ValidationOutcome<T>>;

const ajv2020 = addFormats(new Ajv2020({ allErrors: true, strict: false }));
const ajv07 = addFormats(new Ajv({ allErrors: true, strict: false }));

function pickAjv(schema: JsonSchema) {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  return /draft-0[67]/.test(dialect) ? ajv07 : ajv2020;
}

function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((e) => {
      const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(root)';
      const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params.additionalProperty)}'` : '';
      return `${where}: ${e.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
}

/**
 * Compiles a JSON Schema once. Schemas are JSON Schema 2020-12 unless their `$schema` names
 * draft-06 or draft-07. Throws at boot when the schema itself is invalid.
 */
export function compileJsonSchema(schema: JsonSchema): CompiledValidator {
  const validate = pickAjv(schema).compile(schema);
  return (value) => (validate(value) ? { ok: true, value } : { ok: false, message: describeErrors(validate) });
}

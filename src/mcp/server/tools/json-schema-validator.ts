import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../../interfaces/mcp-tool-options.interface';
import { boundedContains } from './bounded-contains';
import { MAX_VALUES_FOR_ALL_ERRORS, holdsAtMost, validationMessage } from './validation-report';

/** Result of a validation: the (possibly transformed) value, or what is wrong with it. */
export type ValidationOutcome<T = unknown> = { ok: true; value: T } | { ok: false; message: string };

/** A compiled validator; compiled once at boot, run per call. */
export type CompiledValidator<T = unknown> = (value: unknown) => ValidationOutcome<T> | Promise<ValidationOutcome<T>>;

/** An Ajv with the formats, and Ajv's `contains` replaced by `boundedContains`. */
function withBoundedContains<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  ajv.removeKeyword('contains');
  ajv.addKeyword(boundedContains);
  return ajv;
}

// Two Ajv instances per dialect. `allErrors: false` gives the verdict: it stops at the first error
// and keeps no error object per failing value, so a large invalid value costs about what a valid
// one does. `allErrors: true` keeps one error object per failing value, about 150 bytes each
// where a small array item costs 8: it only runs on a value that failed and is small enough
// (`MAX_VALUES_FOR_ALL_ERRORS`), to list several errors in one answer.
const firstError = {
  ajv2020: withBoundedContains(new Ajv2020({ strict: false })),
  ajv07: withBoundedContains(new Ajv({ strict: false })),
};
const allErrors = {
  ajv2020: withBoundedContains(new Ajv2020({ allErrors: true, strict: false })),
  ajv07: withBoundedContains(new Ajv({ allErrors: true, strict: false })),
};

function pickAjv(schema: JsonSchema, ajvs: typeof firstError) {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  return /draft-0[67]/.test(dialect) ? ajvs.ajv07 : ajvs.ajv2020;
}

function* describeErrors(errors: ErrorObject[]): Generator<string> {
  for (const e of errors) {
    const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(root)';
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params.additionalProperty)}'` : '';
    yield `${where}: ${e.message ?? 'is invalid'}${extra}`;
  }
}

/** Why a failing value larger than `MAX_VALUES_FOR_ALL_ERRORS` reports its first error only. */
const NOT_LOOKED_FOR = `further errors were not looked for (the value holds more than ${MAX_VALUES_FOR_ALL_ERRORS} values)`;

/**
 * Compiles a JSON Schema once. Schemas are JSON Schema 2020-12 unless their `$schema` names
 * draft-06 or draft-07. Throws at boot when the schema itself is invalid.
 *
 * A failing value gets a bounded message (`validationMessage`): up to `MAX_LISTED_ERRORS` errors
 * and their count when the value is small, its first error otherwise.
 */
export function compileJsonSchema(schema: JsonSchema): CompiledValidator {
  const verdict = pickAjv(schema, firstError).compile(schema);
  let report: ValidateFunction | undefined;
  return (value) => {
    if (verdict(value)) return { ok: true, value };
    if (!holdsAtMost(value, MAX_VALUES_FOR_ALL_ERRORS)) {
      return { ok: false, message: validationMessage(describeErrors(verdict.errors ?? []), NOT_LOOKED_FOR) };
    }
    // Compiled on the first failure only: most tools never see one.
    report ??= pickAjv(schema, allErrors).compile(schema);
    report(value);
    const errors = report.errors ?? verdict.errors ?? [];
    report.errors = null; // not kept until the next call
    return { ok: false, message: validationMessage(describeErrors(errors)) };
  };
}

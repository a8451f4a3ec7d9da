import { assertKnownOptions, McpConfigurationError } from '../errors/mcp-configuration.errors';

/**
 * What the resolver checks of one option:
 * - `integer`: a whole number of at least `minimum` (1 unless the declaration says otherwise);
 * - `boolean`, `string`: of that type (`minLength` for strings);
 * - `enum`: one of `values`;
 * - `group`: a nested object of `options` (with `orBoolean`, `true` means the defaults and `false` off);
 * - `custom`: the named `validator` of the module resolves it;
 * - `any`: not checked (functions, classes, arrays, connection settings), the default applied.
 */
export type OptionKind = 'integer' | 'boolean' | 'string' | 'enum' | 'group' | 'custom' | 'any';

/** One option of a model, generated from the JSDoc of its interface member. */
export interface OptionSpec {
  /** How the value is checked. */
  readonly kind: OptionKind;
  /** The TypeScript type as declared. */
  readonly type: string;
  /** The description of the member. */
  readonly description: string;
  /** The default applied when the key is absent (a literal of the `@default` tag). */
  readonly default?: unknown;
  /** The prose of the `@default` tag (after the literal, or instead of it). */
  readonly defaultText?: string;
  /** Smallest accepted value of an integer (`@minimum`); 1 when absent. */
  readonly minimum?: number;
  /** Largest accepted value of an integer (`@maximum`). */
  readonly maximum?: number;
  /** Shortest accepted string (`@minLength`). */
  readonly minLength?: number;
  /** The unit of a number: from the name (`…Ms`, `…Bytes`) or `@unit`. */
  readonly unit?: string;
  /** The accepted values of an `enum`. */
  readonly values?: readonly (string | number | boolean)[];
  /** The key must be present (a member that is not optional). */
  readonly required?: boolean;
  /** A group that also accepts `true` (its defaults) and `false` (off, resolved as `false`). */
  readonly orBoolean?: boolean;
  /** The custom validator that resolves the value (`@validate`). */
  readonly validator?: string;
  /** The members of a group (also listed for a custom option whose value is an object). */
  readonly options?: OptionsModel;
}

/** The options of one module or group, by key, in declaration order. */
export type OptionsModel = { readonly [key: string]: OptionSpec };

/** What a custom validator is given. */
export interface OptionValidatorInput {
  /** The value as the user gave it (possibly undefined). */
  readonly value: unknown;
  /** Dotted path of the option, e.g. `tasks.inputTimeoutMs`. */
  readonly path: string;
  /** The declaration of the option. */
  readonly spec: OptionSpec;
  /** The messages of the module. */
  readonly context: OptionsContext;
}

/** Resolves one option that needs code; returns the resolved value or throws `McpConfigurationError`. */
export type OptionValidator = (input: OptionValidatorInput) => unknown;

/** How a module words its messages, and the validators of its custom options. */
export interface OptionsContext {
  /** What the options belong to, e.g. `McpModule (mount "main")` or `McpClientModule`. */
  readonly where: string;
  /** The message of a value that is not what `option` accepts. */
  readonly invalid: (option: string, expected: string) => string;
  /** How the module words "a whole number, 0 or more". */
  readonly nonNegativeInteger: string;
  /** The custom validators, by the name the declarations give. */
  readonly validators?: Readonly<Record<string, OptionValidator>>;
}

/** The keys of a model, in declaration order (what an unknown-key message lists). */
export function optionKeysOf(model: OptionsModel): readonly string[] {
  return Object.keys(model);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ ttlMs?, maxEntries? }`: the shape of a group, for messages. */
export function groupShape(model: OptionsModel): string {
  return `{ ${Object.entries(model)
    .map(([key, spec]) => (spec.required ? key : `${key}?`))
    .join(', ')} }`;
}

function quote(value: string | number | boolean): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** The phrase of what an integer option accepts. */
function integerExpectation(spec: OptionSpec, context: OptionsContext): string {
  const minimum = spec.minimum ?? 1;
  const bound =
    minimum === 1
      ? 'a positive integer'
      : minimum === 0
        ? context.nonNegativeInteger
        : `an integer of at least ${minimum}`;
  return spec.maximum === undefined ? bound : `${bound} of at most ${spec.maximum}`;
}

function resolveValue(spec: OptionSpec, value: unknown, path: string, context: OptionsContext): unknown {
  if (spec.kind === 'custom') {
    const validator = spec.validator === undefined ? undefined : context.validators?.[spec.validator];
    if (!validator) throw new Error(`No validator "${String(spec.validator)}" for option "${path}"`);
    return validator({ value, path, spec, context });
  }
  if (value === undefined) {
    if (spec.kind === 'group' && spec.options) return resolveGroup(spec.options, undefined, path, context);
    return spec.default;
  }
  const refuse = (expected: string): never => {
    throw new McpConfigurationError(context.invalid(path, expected));
  };
  switch (spec.kind) {
    case 'integer': {
      const ok =
        typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= (spec.minimum ?? 1) &&
        (spec.maximum === undefined || value <= spec.maximum);
      return ok ? value : refuse(integerExpectation(spec, context));
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : refuse('true or false');
    case 'string':
      if (typeof value !== 'string' || value.length < (spec.minLength ?? 0))
        refuse(spec.minLength ? 'a non-empty string' : 'a string');
      return value;
    case 'enum': {
      const values = spec.values ?? [];
      if (values.includes(value as string)) return value;
      const listed = values.map(quote);
      return refuse(
        listed.length > 1 ? `${listed.slice(0, -1).join(', ')} or ${listed[listed.length - 1]}` : listed[0],
      );
    }
    case 'group': {
      const options = spec.options ?? {};
      if (spec.orBoolean) {
        if (value === false) return false;
        if (value === true) return resolveGroup(options, undefined, path, context);
        if (!isPlainObject(value)) refuse(`true, false or ${groupShape(options)}`);
      } else if (!isPlainObject(value)) {
        refuse(`an object (${groupShape(options)})`);
      }
      return resolveGroup(options, value, path, context);
    }
    default:
      return value;
  }
}

function resolveGroup(
  model: OptionsModel,
  input: unknown,
  path: string,
  context: OptionsContext,
): Record<string, unknown> {
  const raw = input ?? {};
  const nested: Record<string, readonly string[]> = {};
  for (const [key, spec] of Object.entries(model)) {
    if (spec.kind === 'group' && spec.options) nested[key] = optionKeysOf(spec.options);
  }
  assertKnownOptions(raw, optionKeysOf(model), path ? `${context.where} option "${path}"` : context.where, nested);
  const given = raw as Record<string, unknown>;
  const resolved: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(model)) {
    const value = resolveValue(spec, given[key], path ? `${path}.${key}` : key, context);
    if (value !== undefined) resolved[key] = value;
  }
  return resolved;
}

/**
 * Checks the options of a module against its model and applies the defaults: a key the model
 * does not have is refused (naming the closest known one) at every level, a value of the wrong
 * type or out of bounds is refused with a message saying what the option accepts, and custom
 * options are handed to their validators.
 * @throws McpConfigurationError
 */
export function resolveOptions<T>(model: OptionsModel, input: unknown, context: OptionsContext): T {
  if (input !== undefined && input !== null && !isPlainObject(input)) {
    throw new McpConfigurationError(`${context.where}: the options must be an object`);
  }
  return resolveGroup(model, input ?? undefined, '', context) as T;
}

type Group<S> = S extends { readonly options: infer O extends OptionsModel } ? O : never;

/** The resolved value of one option: defaults applied, groups resolved. */
type ResolvedValue<V, S> = S extends { readonly kind: 'group' }
  ? | ResolvedOptions<NonNullable<Exclude<V, boolean>>, Group<S>>
    | (S extends { readonly orBoolean: true } ? false : never)
  : S extends { readonly default: unknown }
    ? Exclude<V, undefined>
    : V | undefined;

/** A group is always resolved; it is typed as present when one of its members has a default. */
type HasDefaults<S> = [
  Extract<Group<S>[keyof Group<S>], { readonly default: unknown } | { readonly kind: 'group' }>,
] extends [never]
  ? false
  : true;

/** The keys of `T` whose resolved value is always present: a default, or a group with defaults. */
type PresentKeys<T, M extends OptionsModel> = {
  [K in keyof T]-?: K extends keyof M
    ? M[K] extends { readonly kind: 'group' }
      ? HasDefaults<M[K]> extends true
        ? K
        : never
      : M[K] extends { readonly default: unknown }
        ? K
        : never
    : never;
}[keyof T];

/**
 * The resolved type of an options interface `T` with model `M`: every key with a default (and
 * every group with defaults) is present, groups are resolved objects, other keys keep their
 * optional type.
 */
export type ResolvedOptions<T, M extends OptionsModel> = {
  -readonly [K in PresentKeys<T, M>]-?: ResolvedValue<T[K], M[K & keyof M]>;
} & {
  -readonly [K in Exclude<keyof T, PresentKeys<T, M>>]?: K extends keyof M ? ResolvedValue<T[K], M[K]> : T[K];
};

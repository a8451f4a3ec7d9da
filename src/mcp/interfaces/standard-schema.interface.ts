import type { Type } from '@nestjs/common';

// The shape of Standard Schema 1 (https://standardschema.dev), with its JSON Schema extension,
// as far as the library reads it. Written here rather than imported, so that no package is
// needed: Zod 4, Valibot and ArkType schemas match it structurally.

/**
 * What a Standard Schema's `validate` answers: the parsed value, or the issues, each a message and
 * where it applies (property keys, or segments carrying one).
 */
export type McpStandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/**
 * A validator of any Standard Schema library (Zod 4, Valibot, ArkType...): a value with a
 * `~standard` property of version 1. When it also offers Standard JSON Schema
 * (`~standard.jsonSchema`, as Zod 4.2 and later do), the library publishes the JSON Schema it
 * converts to; otherwise a tool gives that schema itself (`inputJsonSchema`, `outputJsonSchema`).
 */
export interface McpStandardSchema<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly '~standard': {
    /** The version of the standard: 1. */
    readonly version: 1;
    /** The library's name. */
    readonly vendor: string;
    /** Validates a value: its parsed form, or its issues (possibly asynchronously). */
    readonly validate: (
      value: unknown,
      options?: { readonly libraryOptions?: Record<string, unknown> | undefined },
    ) => McpStandardSchemaResult<Output> | Promise<McpStandardSchemaResult<Output>>;
    /** The types the schema accepts and produces (for inference only). */
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /**
     * Standard JSON Schema: the JSON Schema of the accepted (`input`) and produced (`output`)
     * values, in the dialect `target` names (the library asks for `'draft-2020-12'`).
     */
    readonly jsonSchema?: {
      readonly input: (options: {
        readonly target: string;
        readonly libraryOptions?: Record<string, unknown> | undefined;
      }) => Record<string, unknown>;
      readonly output: (options: {
        readonly target: string;
        readonly libraryOptions?: Record<string, unknown> | undefined;
      }) => Record<string, unknown>;
    };
  };
}

/**
 * The arguments a handler receives for an `input` declaration: the output type of a Standard
 * Schema (`z.object({ text: z.string() })` gives `{ text: string }`), an instance of a
 * class-validator DTO, and for a JSON Schema (or no input) whatever the handler declares. It
 * types a prompt's arguments from a Standard Schema too.
 *
 * @example
 * ```ts
 * const Echo = z.object({ text: z.string() });
 * class Tools {
 *   @McpTool({ description: 'Echoes text', input: Echo })
 *   echo({ text }: McpToolArgs<typeof Echo>) { return text; }
 * }
 * ```
 */
export type McpToolArgs<I> =
  I extends McpStandardSchema<unknown, infer Output>
    ? NonNullable<I['~standard']['types']> extends { readonly output: infer Typed }
      ? Typed
      : Output
    : I extends Type<infer Instance>
      ? Instance
      : any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON Schema says nothing TypeScript can read

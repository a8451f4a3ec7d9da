import 'reflect-metadata';
import { z } from 'zod';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpToolMetadata } from '../../interfaces/mcp-tool-options.interface';
import type { McpStandardSchema, McpStandardSchemaResult } from '../../interfaces/standard-schema.interface';
import { toCallToolResult } from '../tools/tool-result-mapper';
import type { RegisteredTool } from '../tools/registered-tool';
import { buildPromptEntry, buildTemplateEntry, buildToolEntry, type BuiltTool } from './handler-catalog.factory';

const DECORATED = 'Weather#forecast';
const RUNTIME = 'McpRegistry#addTool(forecast)';

const Forecast = z.object({
  city: z.string().min(2),
  days: z.number().int().min(1).max(7).default(3),
});
const Report = z.object({ city: z.string(), summary: z.string() });

/** The error `fn` throws, which must be an `McpConfigurationError`. */
function configurationError(fn: () => unknown): McpConfigurationError {
  let thrown: unknown = new Error('expected an McpConfigurationError');
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(McpConfigurationError);
  return thrown as McpConfigurationError;
}

/**
 * A Standard Schema written by hand, with no library: an object with a string `name`, whose
 * `validate` answers a promise and reports issues with path segments. With `jsonSchema` it also
 * offers Standard JSON Schema.
 */
function handWritten(withJsonSchema: boolean): McpStandardSchema<{ name: string }, { name: string; upper: string }> {
  const validate = async (value: unknown): Promise<McpStandardSchemaResult<{ name: string; upper: string }>> => {
    const name = (value as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return { issues: [{ message: 'must be a string', path: [{ key: 'name' }] }] };
    return { value: { name, upper: name.toUpperCase() } };
  };
  const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  return {
    '~standard': {
      version: 1,
      vendor: 'hand-written',
      validate,
      ...(withJsonSchema ? { jsonSchema: { input: () => schema, output: () => schema } } : {}),
    },
  };
}

const asTool = (built: BuiltTool): RegisteredTool => ({ ...built, invoke: async () => undefined });

describe('handler-catalog builder with Standard Schemas', () => {
  it('publishes the Zod input as its JSON Schema and validates arguments with Zod', async () => {
    const built = buildToolEntry({ name: 'forecast', description: 'Forecasts', input: Forecast }, DECORATED);
    expect(built.definition.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2 },
        days: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
      },
      required: ['city'],
    });
    // The handler gets Zod's parsed value: the default filled in.
    expect(await built.validateInput({ city: 'Oslo' })).toEqual({ ok: true, value: { city: 'Oslo', days: 3 } });
    expect(await built.validateInput({ city: 'O', days: 9 })).toEqual({
      ok: false,
      message: 'city: Too small: expected string to have >=2 characters; days: Too big: expected number to be <=7',
    });
    expect(await built.validateInput('not an object')).toEqual({
      ok: false,
      message: '(root): Invalid input: expected object, received string',
    });
  });

  it('builds the same definition for a decorated and a runtime declaration', () => {
    const declaration: McpToolMetadata = { name: 'forecast', description: 'd', input: Forecast, output: Report };
    expect(buildToolEntry(declaration, RUNTIME).definition).toEqual(buildToolEntry(declaration, DECORATED).definition);
  });

  it('publishes a Zod output as outputSchema and sends its parsed value as structuredContent', async () => {
    const built = buildToolEntry({ name: 'forecast', description: 'd', input: Forecast, output: Report }, DECORATED);
    expect(built.definition.outputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string' }, summary: { type: 'string' } },
      required: ['city', 'summary'],
      additionalProperties: false,
    });
    const tool = asTool(built);
    // Zod strips the keys the schema does not name: they never reach the client.
    expect(await toCallToolResult(tool, { city: 'Oslo', summary: 'sunny', secret: 'x' })).toEqual({
      content: [{ type: 'text', text: '{"city":"Oslo","summary":"sunny"}' }],
      structuredContent: { city: 'Oslo', summary: 'sunny' },
    });
    expect(await toCallToolResult(tool, { city: 'Oslo' })).toEqual({
      content: [
        {
          type: 'text',
          text: 'Tool "forecast" returned output that does not match its output schema: summary: Invalid input: expected string, received undefined',
        },
      ],
      isError: true,
    });
  });

  it('puts the parsed value in a full result the handler returns, keeping its own content', async () => {
    const tool = asTool(buildToolEntry({ name: 'forecast', description: 'd', output: Report }, DECORATED));
    const returned = {
      content: [{ type: 'text' as const, text: 'Sunny in Oslo' }],
      structuredContent: { city: 'Oslo', summary: 'sunny', secret: 'x' },
    };
    expect(await toCallToolResult(tool, returned)).toEqual({
      content: [{ type: 'text', text: 'Sunny in Oslo' }],
      structuredContent: { city: 'Oslo', summary: 'sunny' },
    });
  });

  it.each([
    ['input', { input: z.string() }, 'the input schema is invalid (its root type is "string", not "object")'],
    [
      'output',
      { output: z.array(z.number()) },
      'the output schema is invalid (its root type is "array", not "object")',
    ],
  ])('refuses a Standard Schema %s that is not an object, naming the tool', (_which, fields, text) => {
    const error = configurationError(() =>
      buildToolEntry({ name: 'forecast', description: 'd', ...fields }, DECORATED),
    );
    expect(error.message).toContain(`@McpTool on ${DECORATED}: ${text}`);
  });

  it('refuses a schema that cannot be converted to JSON Schema, saying what to do', () => {
    const error = configurationError(() =>
      buildToolEntry({ name: 'forecast', description: 'd', input: z.object({ when: z.date() }) }, DECORATED),
    );
    expect(error.message).toBe(
      `@McpTool on ${DECORATED}: the input Standard Schema has no JSON Schema to publish as inputSchema ` +
        '(the zod schema cannot be converted to JSON Schema: Date cannot be represented in JSON Schema). ' +
        'Pass the JSON Schema yourself as inputJsonSchema, or use a schema library that offers Standard JSON Schema ' +
        '(~standard.jsonSchema, such as Zod 4.2 or later).',
    );
  });

  it('refuses a Standard Schema without Standard JSON Schema unless the tool gives its JSON Schema', async () => {
    const error = configurationError(() =>
      buildToolEntry({ name: 'greet', description: 'd', input: handWritten(false) }, RUNTIME),
    );
    expect(error.message).toContain(
      `@McpTool on ${RUNTIME}: the input Standard Schema has no JSON Schema to publish as inputSchema ` +
        '(the hand-written schema offers no Standard JSON Schema (~standard.jsonSchema)). Pass the JSON Schema yourself as inputJsonSchema',
    );
    const given = { type: 'object', properties: { name: { type: 'string', description: 'Who' } } };
    const built = buildToolEntry(
      { name: 'greet', description: 'd', input: handWritten(false), inputJsonSchema: given },
      RUNTIME,
    );
    expect(built.definition.inputSchema).toBe(given);
    expect(await built.validateInput({ name: 'ada' })).toEqual({ ok: true, value: { name: 'ada', upper: 'ADA' } });
  });

  it('validates with any Standard Schema: a hand-written one, asynchronous, with path segments', async () => {
    const built = buildToolEntry({ name: 'greet', description: 'd', input: handWritten(true) }, DECORATED);
    expect(built.definition.inputSchema).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    expect(await built.validateInput({ name: 'ada' })).toEqual({ ok: true, value: { name: 'ada', upper: 'ADA' } });
    expect(await built.validateInput({ name: 42 })).toEqual({ ok: false, message: 'name: must be a string' });
  });

  it('takes a Standard Schema that is a function (as ArkType types are) for a schema, not for a DTO class', async () => {
    const { '~standard': props } = handWritten(true);
    const callable = Object.assign((value: unknown) => value, { '~standard': props });
    const built = buildToolEntry({ name: 'greet', description: 'd', input: callable }, DECORATED);
    expect(built.definition.inputSchema).toEqual(props.jsonSchema?.input({ target: 'draft-2020-12' }));
    expect(await built.validateInput({ name: 'ada' })).toEqual({ ok: true, value: { name: 'ada', upper: 'ADA' } });
    expect(await built.validateInput({})).toEqual({ ok: false, message: 'name: must be a string' });
  });

  it('refuses inputJsonSchema or outputJsonSchema beside a schema that is not a Standard Schema', () => {
    const jsonSchema = { type: 'object' };
    expect(
      configurationError(() =>
        buildToolEntry({ name: 't', description: 'd', input: jsonSchema, inputJsonSchema: jsonSchema }, DECORATED),
      ).message,
    ).toContain(`@McpTool on ${DECORATED}: inputJsonSchema is only for a Standard Schema input`);
    expect(
      configurationError(() => buildToolEntry({ name: 't', description: 'd', outputJsonSchema: jsonSchema }, DECORATED))
        .message,
    ).toContain('outputJsonSchema is only for a Standard Schema output');
  });

  it('reads the x-mcp-header annotations of the converted schema', () => {
    const Region = z.object({ region: z.string().meta({ 'x-mcp-header': 'Re gion' }) });
    const error = configurationError(() =>
      buildToolEntry({ name: 'forecast', description: 'd', input: Region }, RUNTIME),
    );
    expect(error.message).toContain(`@McpTool "forecast" on ${RUNTIME}: invalid x-mcp-header`);
  });

  describe('prompt arguments', () => {
    it('takes the arguments from a Zod object of strings and validates with it', async () => {
      const Review = z.object({
        code: z.string().describe('The code'),
        language: z.enum(['python', 'typescript']).optional(),
      });
      const { entry, argumentNames } = buildPromptEntry({ name: 'review', arguments: Review }, 'Prompts#review');
      expect(entry.definition.arguments).toEqual([
        { name: 'code', description: 'The code', required: true },
        { name: 'language', required: false },
      ]);
      expect(argumentNames).toEqual(['code', 'language']);
      expect(await entry.validateArguments({ code: 'x = 1' })).toEqual({ ok: true, value: { code: 'x = 1' } });
      expect(await entry.validateArguments({})).toEqual({ ok: false, message: 'missing required argument: code' });
      expect(await entry.validateArguments({ code: 'x', language: 'cobol' })).toEqual({
        ok: false,
        message: 'language: Invalid option: expected one of "python"|"typescript"',
      });
    });

    it.each([
      ['an argument that is not a string', z.object({ n: z.number() }), 'the argument n is of type "number"'],
      ['a schema that is not an object', z.string(), 'its root type is "string", not "object"'],
      ['a schema without Standard JSON Schema', handWritten(false), 'offers no Standard JSON Schema'],
    ])('refuses %s, naming the prompt', (_label, schema, text) => {
      const error = configurationError(() => buildPromptEntry({ name: 'p', arguments: schema }, 'Prompts#p'));
      expect(error.message).toContain('@McpPrompt on Prompts#p: the arguments schema cannot define');
      expect(error.message).toContain(text);
    });
  });

  describe('resource template variables', () => {
    const OWNER = 'Users#profile';

    it("validates and parses the variables of a URI with the template's schema", async () => {
      const built = buildTemplateEntry(
        {
          name: 'profile',
          uriTemplate: 'users://{id}/posts/{page}',
          variables: z.object({ id: z.string().min(2), page: z.coerce.number().int().min(1) }),
        },
        OWNER,
      );
      expect(await built.validateVariables?.({ id: 'alice', page: '2' })).toEqual({
        ok: true,
        value: { id: 'alice', page: 2 },
      });
      expect(await built.validateVariables?.({ id: 'a', page: 'x' })).toEqual({
        ok: false,
        message:
          'id: Too small: expected string to have >=2 characters; page: Invalid input: expected number, received NaN',
      });
      // Without a schema the strings of the URI reach the handler as they are.
      expect(buildTemplateEntry({ name: 'p', uriTemplate: 'users://{id}' }, OWNER).validateVariables).toBeUndefined();
    });

    it('accepts a schema without Standard JSON Schema, and validates with it', async () => {
      const built = buildTemplateEntry(
        { name: 'named', uriTemplate: 'names://{name}', variables: handWritten(false) },
        OWNER,
      );
      expect(await built.validateVariables?.({ name: 'ada' })).toEqual({
        ok: true,
        value: { name: 'ada', upper: 'ADA' },
      });
    });

    it('refuses at boot a schema that is not a Standard Schema, or names a variable the template lacks', () => {
      expect(
        configurationError(() =>
          buildTemplateEntry(
            { name: 'p', uriTemplate: 'users://{id}', variables: { type: 'object' } as unknown as McpStandardSchema },
            OWNER,
          ),
        ).message,
      ).toBe(
        "@McpResourceTemplate on Users#profile: variables must be a Standard Schema of an object keyed by the template's variables (it is not a Standard Schema). " +
          'Pass a schema such as z.object({ id: z.coerce.number() }), or leave variables out to receive the strings of the URI.',
      );
      expect(
        configurationError(() =>
          buildTemplateEntry(
            { name: 'p', uriTemplate: 'users://{id}', variables: z.object({ id: z.string(), page: z.string() }) },
            OWNER,
          ),
        ).message,
      ).toContain('(it names "page", which users://{id} does not have)');
    });
  });
});

import {
  toAnthropicTools,
  toFunctionName,
  toGeminiFunctionDeclarations,
  toGeminiSchema,
  toOpenAiTools,
} from './tool-format-converters';
import type { McpToolDefinition } from './tool-router';

const weather: McpToolDefinition = {
  name: 'weather.get',
  description: 'Current weather',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City' },
      unit: { type: ['string', 'null'], enum: ['C', 'F'] },
      days: { type: 'array', items: { type: 'integer' } },
    },
    required: ['city'],
    additionalProperties: false,
  },
};
const ping: McpToolDefinition = { name: 'ping', inputSchema: { type: 'object' }, annotations: { title: 'Ping it' } };

describe('tool format converters', () => {
  it('converts to OpenAI function tools', () => {
    expect(toOpenAiTools([weather, ping])).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather_get',
          description: 'Current weather',
          parameters: {
            type: 'object',
            properties: weather.inputSchema.properties,
            required: ['city'],
            additionalProperties: false,
          },
        },
      },
      {
        type: 'function',
        function: { name: 'ping', description: 'Ping it', parameters: { type: 'object', properties: {} } },
      },
    ]);
  });

  it('converts to Anthropic tools, qualifying names by server on request', () => {
    expect(toAnthropicTools([{ server: 'wx', tool: weather }], { qualify: true })).toEqual([
      {
        name: 'wx__weather_get',
        description: 'Current weather',
        input_schema: {
          type: 'object',
          properties: weather.inputSchema.properties,
          required: ['city'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('converts to Gemini function declarations with its schema dialect', () => {
    expect(toGeminiFunctionDeclarations([weather, ping])).toEqual([
      {
        name: 'weather_get',
        description: 'Current weather',
        parameters: {
          type: 'OBJECT',
          required: ['city'],
          properties: {
            city: { type: 'STRING', description: 'City' },
            unit: { type: 'STRING', nullable: true, enum: ['C', 'F'] },
            days: { type: 'ARRAY', items: { type: 'INTEGER' } },
          },
        },
      },
      { name: 'ping', description: 'Ping it' },
    ]);
  });

  it('keeps the bare tool name of a server tool unless asked to qualify it', () => {
    expect(toOpenAiTools([{ server: 'wx', tool: weather }]).map((tool) => tool.function.name)).toEqual(['weather_get']);
    expect(toGeminiFunctionDeclarations([{ server: 'wx', tool: ping }], { qualify: true })).toEqual([
      { name: 'wx__ping', description: 'Ping it' },
    ]);
  });

  it('describes a tool by its description, else its title, else its annotation title, else not at all', () => {
    const titled = {
      name: 't',
      title: 'Titled',
      annotations: { title: 'Annotated' },
      inputSchema: { type: 'object' },
    } as McpToolDefinition;
    const bare = { name: 'b', inputSchema: { type: 'object' } } as McpToolDefinition;
    expect(toAnthropicTools([titled, bare])).toEqual([
      { name: 't', description: 'Titled', input_schema: { type: 'object', properties: {} } },
      { name: 'b', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('gives a tool without an input schema an empty object schema', () => {
    const schemaless = { name: 'now' } as unknown as McpToolDefinition;
    expect(toOpenAiTools([schemaless])[0].function.parameters).toEqual({ type: 'object', properties: {} });
    expect(toGeminiFunctionDeclarations([schemaless])).toEqual([{ name: 'now' }]);
  });

  it('makes names the model APIs accept: replaced characters, at most 64, never empty', () => {
    expect(toFunctionName('a.b c/d-é')).toBe('a_b_c_d-_');
    expect(toFunctionName('x'.repeat(70))).toBe('x'.repeat(64));
    expect(toFunctionName('')).toBe('_');
  });

  it('rewrites const, unions, tuple items and non-nullable type lists for Gemini', () => {
    expect(
      toGeminiSchema({
        type: 'object',
        additionalProperties: false,
        properties: {
          kind: { const: 3 },
          either: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 1 }] },
          one: { oneOf: [{ type: 'boolean' }] },
          pair: { type: 'array', items: [{ type: 'string' }], minItems: 2 },
          many: { type: ['integer', 'string'] },
          level: { type: 'string', enum: ['low', 2] },
        },
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        kind: { enum: ['3'] },
        either: { anyOf: [{ type: 'STRING' }, { type: 'INTEGER', minimum: 1 }] },
        one: { anyOf: [{ type: 'BOOLEAN' }] },
        pair: { type: 'ARRAY', minItems: 2 },
        many: { type: 'INTEGER' },
        level: { type: 'STRING', enum: ['low', '2'] },
      },
    });
  });
});

import { toAnthropicTools, toGeminiFunctionDeclarations, toOpenAiTools } from './tool-format-converters';
import type { McpToolDefinition } from './tool-router';

const weather: McpToolDefinition = {
  name: 'weather.get',
  description: 'Current weather',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { city: { type: 'string', description: 'City' }, unit: { type: ['string', 'null'], enum: ['C', 'F'] }, days: { type: 'array', items: { type: 'integer' } } },
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
          parameters: { type: 'object', properties: weather.inputSchema.properties, required: ['city'], additionalProperties: false },
        },
      },
      { type: 'function', function: { name: 'ping', description: 'Ping it', parameters: { type: 'object', properties: {} } } },
    ]);
  });

  it('converts to Anthropic tools, qualifying names by server on request', () => {
    expect(toAnthropicTools([{ server: 'wx', tool: weather }], { qualify: true })).toEqual([
      {
        name: 'wx__weather_get',
        description: 'Current weather',
        input_schema: { type: 'object', properties: weather.inputSchema.properties, required: ['city'], additionalProperties: false },
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
});

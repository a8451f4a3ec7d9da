import { Injectable } from '@nestjs/common';
import { McpTool, type McpToolContext } from '../../../src/mcp';
import { RED_PIXEL_PNG, SILENT_WAV } from './fixture-media';

const NO_ARGS = { type: 'object', properties: {} };

/** Waits `ms`, or less when the call is cancelled. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** What the elicitation tools report back: the action and the content the client sent. */
function elicitationOutcome(prefix: string, result: { action: string; content?: unknown }): string {
  return `${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

/**
 * The tools of the official conformance suite (`@modelcontextprotocol/conformance`, server
 * scenarios `tools-*`, `elicitation-*`, `json-schema-2020-12`, `server-sse-*`), written the way
 * an application would write them: `@McpTool` methods on a provider.
 */
@Injectable()
export class ConformanceTools {
  @McpTool({ name: 'test_simple_text', description: 'Returns a simple text response.', input: NO_ARGS })
  simpleText(): string {
    return 'This is a simple text response for testing.';
  }

  @McpTool({ name: 'test_image_content', description: 'Returns a 1x1 PNG image.', input: NO_ARGS })
  imageContent() {
    return [{ type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' }];
  }

  @McpTool({ name: 'test_audio_content', description: 'Returns a short WAV clip.', input: NO_ARGS })
  audioContent() {
    return [{ type: 'audio' as const, data: SILENT_WAV, mimeType: 'audio/wav' }];
  }

  @McpTool({ name: 'test_embedded_resource', description: 'Returns an embedded text resource.', input: NO_ARGS })
  embeddedResource() {
    return [
      {
        type: 'resource' as const,
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ];
  }

  @McpTool({
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource content.',
    input: NO_ARGS,
  })
  multipleContentTypes() {
    return [
      { type: 'text' as const, text: 'Multiple content types test:' },
      { type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource' as const,
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ];
  }

  @McpTool({
    name: 'test_tool_with_logging',
    description: 'Sends three info log messages while it runs.',
    input: NO_ARGS,
  })
  async withLogging(_input: unknown, ctx: McpToolContext): Promise<string> {
    await ctx.log('info', 'Tool execution started');
    await pause(50, ctx.signal);
    await ctx.log('info', 'Tool processing data');
    await pause(50, ctx.signal);
    await ctx.log('info', 'Tool execution completed');
    return 'Tool with logging executed successfully';
  }

  @McpTool({ name: 'test_error_handling', description: 'Always fails.', input: NO_ARGS })
  errorHandling(): never {
    throw new Error('This tool intentionally returns an error for testing');
  }

  @McpTool({ name: 'test_tool_with_progress', description: 'Reports progress 0, 50 and 100 of 100.', input: NO_ARGS })
  async withProgress(_input: unknown, ctx: McpToolContext): Promise<string> {
    await ctx.progress(0, 100);
    await pause(50, ctx.signal);
    await ctx.progress(50, 100);
    await pause(50, ctx.signal);
    await ctx.progress(100, 100);
    return 'Tool with progress executed successfully';
  }

  @McpTool({
    name: 'test_sampling',
    description: 'Asks the client model to complete a prompt.',
    input: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
  })
  async sampling({ prompt }: { prompt: string }, ctx: McpToolContext): Promise<string> {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens: 100,
    });
    const content = result.content as { type?: string; text?: string } | undefined;
    return `LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`;
  }

  @McpTool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email address.',
    input: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
  })
  async elicitation({ message }: { message: string }, ctx: McpToolContext): Promise<string> {
    const result = await ctx.elicit(message, {
      type: 'object',
      properties: {
        username: { type: 'string', description: "User's response" },
        email: { type: 'string', description: "User's email address" },
      },
      required: ['username', 'email'],
    });
    return elicitationOutcome('User response', result);
  }

  @McpTool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicits primitives that all carry defaults (SEP-1034).',
    input: NO_ARGS,
  })
  async elicitationDefaults(_input: unknown, ctx: McpToolContext): Promise<string> {
    const result = await ctx.elicit('Please review and update the form fields with defaults', {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: {
          type: 'string',
          description: 'User status',
          enum: ['active', 'inactive', 'pending'],
          default: 'active',
        },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    });
    return elicitationOutcome('Elicitation completed', result);
  }

  @McpTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicits the five enum shapes of SEP-1330.',
    input: NO_ARGS,
  })
  async elicitationEnums(_input: unknown, ctx: McpToolContext): Promise<string> {
    const result = await ctx.elicit('Please pick from the enum fields', {
      type: 'object',
      properties: {
        untitledSingle: {
          type: 'string',
          description: 'Untitled single-select',
          enum: ['option1', 'option2', 'option3'],
        },
        titledSingle: {
          type: 'string',
          description: 'Titled single-select',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Legacy titled enum',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Untitled multi-select',
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Titled multi-select',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
      required: [],
    });
    return elicitationOutcome('Elicitation completed', result);
  }

  @McpTool({
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    // The 0.2 suite's version of the schema (SEP-1613 + SEP-2106: $anchor, allOf/anyOf,
    // if/then/else); it is a superset of what 0.1.16 checks ($schema, $defs, additionalProperties).
    input: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  })
  jsonSchema2020(input: Record<string, unknown>): string {
    return `Received: ${JSON.stringify(input)}`;
  }

  /**
   * SEP-1699 polling (`server-sse-polling`): a slow tool, so that a server that closes the SSE
   * stream mid-call has a call to resume after the client reconnects with Last-Event-ID.
   */
  @McpTool({
    name: 'test_reconnection',
    description: 'Takes a moment; used to test SSE stream resumption.',
    input: NO_ARGS,
  })
  async reconnection(_input: unknown, ctx: McpToolContext): Promise<string> {
    await pause(200, ctx.signal);
    return 'Reconnection test completed successfully';
  }
}

import { Injectable } from '@nestjs/common';
import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { z } from 'zod';
import { McpModule, McpPrompt, McpRegistry, McpTool, type McpToolArgs } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { connectAtRevision, toolResultOf, type ToolResult } from '../support/revision-clients';

const Forecast = z.object({
  city: z.string().min(2).describe('The city'),
  days: z.number().int().min(1).max(7).default(3),
});
const Report = z.object({ city: z.string(), summary: z.string() });
const REPORT_JSON_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, summary: { type: 'string' } },
  required: ['city', 'summary'],
};

/** The class-validator twin of `Forecast`: its failures are the reference. */
class ForecastDto {
  @IsString()
  @MinLength(2)
  city: string;

  @IsInt()
  @Min(1)
  @Max(7)
  days = 3;
}

const Review = z.object({ code: z.string(), language: z.enum(['python', 'typescript']).optional() });

@Injectable()
class ForecastTools {
  @McpTool({ description: 'Forecasts the weather', input: Forecast, output: Report })
  forecast({ city, days }: McpToolArgs<typeof Forecast>) {
    // `secret` is not in the output schema: Zod strips it from structuredContent.
    return { city, summary: `${days} days of sun`, secret: 'internal' };
  }

  @McpTool({ description: 'Forecasts the weather (DTO)', input: ForecastDto })
  forecast_dto({ city, days }: McpToolArgs<typeof ForecastDto>) {
    return `${days} days of sun in ${city}`;
  }

  @McpTool({ description: 'Returns a report that breaks its Zod output schema', output: Report })
  broken() {
    return { city: 'Oslo', summary: 42 };
  }

  @McpTool({ description: 'Returns a report that breaks its JSON Schema output', output: REPORT_JSON_SCHEMA })
  broken_json() {
    return { city: 'Oslo', summary: 42 };
  }

  @McpPrompt({ name: 'review', description: 'Reviews code', arguments: Review })
  review({ code, language }: McpToolArgs<typeof Review>) {
    return `Please review this ${language ?? 'code'}:\n${code}`;
  }
}

/** What both clients offer here, whatever the revision. */
interface AnyClient {
  listTools(): Promise<{ tools: Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<{ messages: unknown[] }>;
  close(): Promise<void>;
}

const FORECAST_INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2, description: 'The city' },
    days: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
  },
  required: ['city'],
};

/**
 * Tools and a prompt declared with Zod, decorated and added at run time, called by the official
 * SDK clients on both revisions: what tools/list publishes, typed arguments, and failures that
 * answer as a class-validator DTO's and a JSON Schema output's do.
 */
describe('Standard Schema (Zod) tools with the official SDK clients (PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-schema-suite' },
        }),
      ],
      providers: [ForecastTools],
    });
    const Shout = z.object({ text: z.string().min(1) });
    await server.app
      .get(McpRegistry)
      .addTool(
        { name: 'shout', description: 'Shouts', input: Shout, output: z.object({ shouted: z.string() }) },
        ({ text }) => {
          // @ts-expect-error the arguments are typed from the schema: `text` is a string
          const typed: number = text;
          void typed;
          return { shouted: text.toUpperCase() };
        },
      );
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function connect(revision: string): Promise<AnyClient> {
    const { client, sessionId } = await connectAtRevision(new URL(`${server.baseUrl}/mcp`), revision, 'schema-e2e');
    if (revision === '2025-11-25') expect(sessionId).toBeDefined();
    return client;
  }

  describe.each(['2025-11-25', '2026-07-28'])('revision %s', (revision) => {
    let client: AnyClient;
    beforeAll(async () => (client = await connect(revision)));
    afterAll(async () => client?.close());

    const call = (name: string, args: Record<string, unknown>): Promise<ToolResult> => toolResultOf(client, name, args);

    it('lists the Zod-derived inputSchema and outputSchema', async () => {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect(byName.get('forecast')).toMatchObject({
        inputSchema: FORECAST_INPUT_SCHEMA,
        outputSchema: { ...REPORT_JSON_SCHEMA, $schema: FORECAST_INPUT_SCHEMA.$schema, additionalProperties: false },
      });
      expect(byName.get('shout')).toMatchObject({
        inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
        outputSchema: { type: 'object', properties: { shouted: { type: 'string' } }, required: ['shouted'] },
      });
    });

    it('calls a decorated and a runtime tool with the parsed arguments, structuredContent as the schema gives it', async () => {
      expect(await call('forecast', { city: 'Oslo' })).toEqual({
        content: [{ type: 'text', text: '{"city":"Oslo","summary":"3 days of sun"}' }],
        structuredContent: { city: 'Oslo', summary: '3 days of sun' },
      });
      expect(await call('shout', { text: 'hi' })).toMatchObject({ structuredContent: { shouted: 'HI' } });
    });

    it('answers invalid arguments as it answers a DTO tool', async () => {
      const bad = { city: 'O', days: 9 };
      const dto = await call('forecast_dto', bad);
      const zod = await call('forecast', bad);
      expect(dto).toEqual({
        content: [
          {
            type: 'text',
            text:
              'Invalid arguments for tool "forecast_dto": city: city must be longer than or equal to 2 characters; ' +
              'days: days must not be greater than 7',
          },
        ],
        isError: true,
      });
      expect(zod).toEqual({
        content: [
          {
            type: 'text',
            text:
              'Invalid arguments for tool "forecast": city: Too small: expected string to have >=2 characters; ' +
              'days: Too big: expected number to be <=7',
          },
        ],
        isError: true,
      });
    });

    it('answers output that breaks a Zod output schema as it answers a JSON Schema one', async () => {
      expect(await call('broken_json', {})).toEqual({
        content: [
          {
            type: 'text',
            text: 'Tool "broken_json" returned output that does not match its output schema: summary: must be string',
          },
        ],
        isError: true,
      });
      expect(await call('broken', {})).toEqual({
        content: [
          {
            type: 'text',
            text:
              'Tool "broken" returned output that does not match its output schema: ' +
              'summary: Invalid input: expected string, received number',
          },
        ],
        isError: true,
      });
    });

    it('gets a prompt whose arguments a Zod object defines, and refuses arguments it rejects', async () => {
      const review = await client.getPrompt({ name: 'review', arguments: { code: 'x = 1', language: 'python' } });
      expect(review.messages).toEqual([
        { role: 'user', content: { type: 'text', text: 'Please review this python:\nx = 1' } },
      ]);
      await expect(
        client.getPrompt({ name: 'review', arguments: { code: 'x = 1', language: 'cobol' } }),
      ).rejects.toMatchObject({ code: -32602 });
    });
  });
});

import { Injectable } from '@nestjs/common';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import {
  McpModule,
  McpRegistry,
  McpResourceTemplate,
  McpTool,
  type McpResourceRequest,
  type McpToolArgs,
} from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { connectAtRevision, toolResultOf, type ToolResult } from '../support/revision-clients';

// The same forecast tool as the Zod suite's (standard-schema-tools), in Valibot and in ArkType.

/** Valibot: the schema goes through `toStandardJsonSchema`, which adds Standard JSON Schema. */
const ValibotForecast = toStandardJsonSchema(
  v.object({
    city: v.pipe(v.string(), v.minLength(2), v.description('The city')),
    days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7)), 3),
  }),
);
const ValibotReport = toStandardJsonSchema(v.object({ city: v.string(), summary: v.string() }));

/** ArkType: every type offers Standard JSON Schema; `'+': 'delete'` strips keys it does not name. */
const ArkForecast = type({
  '+': 'delete',
  // `.describe()` would word the failures too ("must be The city"): ArkType reads descriptions as expectations.
  city: 'string >= 2',
  days: '(1 <= number.integer <= 7) = 3',
});
const ArkReport = type({ '+': 'delete', city: 'string', summary: 'string' });

@Injectable()
class LibraryTools {
  @McpTool({ description: 'Forecasts the weather (Valibot)', input: ValibotForecast, output: ValibotReport })
  forecast_valibot({ city, days }: McpToolArgs<typeof ValibotForecast>) {
    // `secret` is not in the output schema: a Valibot object strips it from structuredContent.
    return { city, summary: `${days.toFixed(0)} days of sun`, secret: 'internal' };
  }

  @McpTool({ description: 'Returns a report that breaks its Valibot output schema', output: ValibotReport })
  broken_valibot() {
    return { city: 'Oslo', summary: 42 };
  }

  @McpTool({ description: 'Forecasts the weather (ArkType)', input: ArkForecast, output: ArkReport })
  forecast_arktype({ city, days }: McpToolArgs<typeof ArkForecast>) {
    return { city, summary: `${days.toFixed(0)} days of sun`, secret: 'internal' };
  }

  @McpTool({ description: 'Returns a report that breaks its ArkType output schema', output: ArkReport })
  broken_arktype() {
    return { city: 'Oslo', summary: 42 };
  }
}

/** The variables of a posts page: the page number parsed from the URI's string. */
const PostsPage = z.object({ user: z.string().min(2), page: z.coerce.number().int().min(1) });

@Injectable()
class LibraryResources {
  @McpResourceTemplate({ uriTemplate: 'posts://{user}/{page}', mimeType: 'application/json', variables: PostsPage })
  posts({ params }: McpResourceRequest<McpToolArgs<typeof PostsPage>>) {
    return JSON.stringify({ user: params.user, page: params.page, next: params.page + 1 });
  }
}

/** What both clients offer here, whatever the revision. */
interface AnyClient {
  listTools(): Promise<{ tools: Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  close(): Promise<void>;
}

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** What each library publishes, and how it words the failures the suite provokes. */
const LIBRARIES = [
  {
    library: 'valibot',
    inputSchema: {
      $schema: DRAFT_2020_12,
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2, description: 'The city' },
        days: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
      },
      required: ['city'],
    },
    outputSchema: {
      $schema: DRAFT_2020_12,
      type: 'object',
      properties: { city: { type: 'string' }, summary: { type: 'string' } },
      required: ['city', 'summary'],
    },
    invalidArguments:
      'city: Invalid length: Expected >=2 but received 1; days: Invalid value: Expected <=7 but received 9',
    invalidOutput: 'summary: Invalid type: Expected string but received 42',
  },
  {
    library: 'arktype',
    inputSchema: {
      $schema: DRAFT_2020_12,
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2 },
        days: { type: 'integer', minimum: 1, maximum: 7 },
      },
      required: ['city'],
    },
    outputSchema: {
      $schema: DRAFT_2020_12,
      type: 'object',
      properties: { city: { type: 'string' }, summary: { type: 'string' } },
      required: ['city', 'summary'],
      additionalProperties: false,
    },
    invalidArguments: 'city: city must be at least length 2 (was 1); days: days must be at most 7 (was 9)',
    invalidOutput: 'summary: summary must be a string (was a number)',
  },
] as const;

/**
 * Tools declared with Valibot (through `@valibot/to-json-schema`) and ArkType, decorated and added
 * at run time, called by the official SDK clients on both revisions: the published schemas,
 * parsed arguments, `structuredContent` checked against the output schema, and failures worded
 * by each library in the library's bounded message.
 */
describe('Standard Schema tools in Valibot and ArkType with the official SDK clients (PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [LibraryTools, LibraryResources],
    });
    const registry = server.app.get(McpRegistry);
    const ValibotShout = toStandardJsonSchema(v.object({ text: v.pipe(v.string(), v.minLength(1)) }));
    await registry.addTool(
      {
        name: 'shout_valibot',
        description: 'Shouts',
        input: ValibotShout,
        output: toStandardJsonSchema(v.object({ shouted: v.string() })),
      },
      ({ text }) => {
        // @ts-expect-error the arguments are typed from the schema: `text` is a string
        const typed: number = text;
        void typed;
        return { shouted: text.toUpperCase() };
      },
    );
    const Tag = toStandardJsonSchema(v.object({ tag: v.pipe(v.string(), v.regex(/^[a-z]+$/)) }));
    await registry.addResourceTemplate(
      { name: 'tagged', uriTemplate: 'tags://{tag}', variables: Tag },
      ({ uri, params }) => `${uri} is tagged ${String(params.tag)}`,
    );
    const ArkShout = type({ text: 'string > 0' });
    await registry.addTool(
      { name: 'shout_arktype', description: 'Shouts', input: ArkShout, output: type({ shouted: 'string' }) },
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

  const connect = async (revision: string): Promise<AnyClient> =>
    (await connectAtRevision(new URL(`${server.baseUrl}/mcp`), revision, 'schema-libraries-e2e')).client;

  describe.each(['2025-11-25', '2026-07-28'])('revision %s', (revision) => {
    let client: AnyClient;
    beforeAll(async () => (client = await connect(revision)));
    afterAll(async () => client?.close());

    const call = (name: string, args: Record<string, unknown>): Promise<ToolResult> => toolResultOf(client, name, args);

    it('reads a template whose variables a schema parses (Zod, decorated; Valibot, at run time), and refuses variables it rejects', async () => {
      const read = async (uri: string) => (await client.readResource({ uri })) as { contents: { text: string }[] };
      expect(JSON.parse((await read('posts://alice/2')).contents[0].text)).toEqual({ user: 'alice', page: 2, next: 3 });
      expect((await read('tags://news')).contents[0].text).toBe('tags://news is tagged news');
      await expect(read('posts://alice/zero')).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('the variables of "posts://alice/zero" are not valid: page: '),
      });
      await expect(read('tags://NEWS')).rejects.toMatchObject({ code: -32602 });
    });

    describe.each(LIBRARIES)('$library', ({ library, inputSchema, outputSchema, invalidArguments, invalidOutput }) => {
      it('lists the inputSchema and outputSchema the library converts its schemas to', async () => {
        const { tools } = await client.listTools();
        const byName = new Map(tools.map((tool) => [tool.name, tool]));
        expect(byName.get(`forecast_${library}`)).toEqual(expect.objectContaining({ inputSchema, outputSchema }));
        expect(byName.get(`shout_${library}`)).toMatchObject({
          inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
          outputSchema: { type: 'object', properties: { shouted: { type: 'string' } }, required: ['shouted'] },
        });
      });

      it('calls a decorated and a runtime tool with the parsed arguments, structuredContent as the output schema gives it', async () => {
        expect(await call(`forecast_${library}`, { city: 'Oslo' })).toEqual({
          content: [{ type: 'text', text: '{"city":"Oslo","summary":"3 days of sun"}' }],
          structuredContent: { city: 'Oslo', summary: '3 days of sun' },
        });
        expect(await call(`forecast_${library}`, { city: 'Bergen', days: 5 })).toMatchObject({
          structuredContent: { city: 'Bergen', summary: '5 days of sun' },
        });
        expect(await call(`shout_${library}`, { text: 'hi' })).toMatchObject({ structuredContent: { shouted: 'HI' } });
      });

      it('answers invalid arguments with each issue as path: message', async () => {
        expect(await call(`forecast_${library}`, { city: 'O', days: 9 })).toEqual({
          content: [{ type: 'text', text: `Invalid arguments for tool "forecast_${library}": ${invalidArguments}` }],
          isError: true,
        });
        expect(await call(`shout_${library}`, {})).toMatchObject({
          content: [
            { type: 'text', text: expect.stringContaining(`Invalid arguments for tool "shout_${library}": text: `) },
          ],
          isError: true,
        });
      });

      it('answers output that breaks the output schema as a tool error', async () => {
        expect(await call(`broken_${library}`, {})).toEqual({
          content: [
            {
              type: 'text',
              text: `Tool "broken_${library}" returned output that does not match its output schema: ${invalidOutput}`,
            },
          ],
          isError: true,
        });
      });
    });
  });
});

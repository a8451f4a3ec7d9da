import { Injectable } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { McpModule, McpTool } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { callRequest, MCP_ACCEPT, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** The part of a `tools/call` answer these tests read. */
type ToolCallReply = { result: { isError: boolean; content: Array<{ text: string }> } };

class OrderLine {
  @IsString()
  sku: string;
}

class OrderInput {
  @ValidateNested({ each: true })
  @Type(() => OrderLine)
  lines: OrderLine[];
}

/** Tools whose arguments a client can break once per array item: a JSON Schema one and a DTO one. */
@Injectable()
class TaggingTools {
  @McpTool({ description: 'Places an order', input: OrderInput })
  order({ lines }: OrderInput): string {
    return `${lines.length} lines`;
  }

  @McpTool({
    description: 'Labels with at least one text tag',
    input: {
      type: 'object',
      properties: { tags: { type: 'array', contains: { type: 'string' } } },
      required: ['tags'],
    },
  })
  label({ tags }: { tags: unknown[] }): string {
    return `${tags.length} tags`;
  }

  @McpTool({
    description: 'Stores tags',
    input: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, required: ['tags'] },
  })
  tag({ tags }: { tags: string[] }): string {
    return `${tags.length} tags`;
  }
}

/** The garbage collector, so the baseline holds live objects only. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Largest heap seen while `work` runs, sampled every few milliseconds, minus the heap before it. */
async function peakHeapGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const gc = collector();
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, growth: peak - before };
  } finally {
    clearInterval(sample);
  }
}

/** The longest validation message the module may write: ten errors of 200 characters and a tail. */
const MESSAGE_BOUND = 2_500;

describe.each(HTTP_ADAPTERS)(
  'a tool call with a huge invalid argument gets a bounded error (PostgreSQL, %s)',
  (adapter) => {
    let db: TestDatabase;
    let server: RunningApp;

    beforeAll(async () => {
      db = await createTestDatabase();
      server = await startApp(
        db.url,
        { imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [TaggingTools] })], providers: [TaggingTools] },
        adapter,
      );
    });

    afterAll(async () => {
      await server?.close();
      await db?.drop();
    });

    it.each([
      ['items: string', 'tag', 'tags.0: must be string'],
      ['contains: string', 'label', 'tags: must contain at least 1 valid item(s)'],
    ])(
      'answers a 3 MB array of numbers against %s with a short message, a short audit row and a heap growth near the input size',
      async (_schema, tool, error) => {
        const url = `${server.baseUrl}/mcp`;
        const { sessionId } = await openSession(url);
        const count = 1_500_000;
        const id = `huge-${tool}`;
        // Built as text: serializing a 1.5M-item array here would cost the test more than the server.
        const body = `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"${tool}","arguments":{"tags":[${'1,'.repeat(count - 1)}1]}}}`;
        expect(body.length).toBeGreaterThan(3_000_000);

        const { result: reply, growth } = await peakHeapGrowth(async () => {
          const response = await fetch(url, {
            method: 'POST',
            headers: {
              Authorization: 'Bearer token-alice',
              'Content-Type': 'application/json',
              Accept: MCP_ACCEPT,
              'Mcp-Session-Id': sessionId,
              ...versionHeader(),
            },
            body,
          });
          return { status: response.status, json: (await response.json()) as ToolCallReply };
        });

        expect(reply.status).toBe(200);
        expect(reply.json.result.isError).toBe(true);
        const text: string = reply.json.result.content[0].text;
        expect(text).toBe(
          `Invalid arguments for tool "${tool}": ${error}; further errors were not looked for (the value holds more than 1000 values)`,
        );
        expect(text.length).toBeLessThan(MESSAGE_BOUND);

        const [row] = await db.dataSource.query(
          `SELECT is_error, length(coalesce(response::text, '')) AS response_chars, length(coalesce(note, '')) AS note_chars FROM mcp_events WHERE request->>'id' = $1`,
          [id],
        );
        expect(row).toEqual({ is_error: true, response_chars: expect.any(Number), note_chars: expect.any(Number) });
        expect(row.response_chars).toBeLessThan(MESSAGE_BOUND + 500);
        expect(row.note_chars).toBeLessThan(MESSAGE_BOUND);

        // What the input itself costs: the body as bytes and as text, the parsed array (8 bytes an
        // item), the request's copy for its audit row: 7 times the body, and up to 12.5 times under
        // the coverage instrumentation of CI. One error object per item costs about 150 bytes an
        // item (235 times the body measured), Ajv's own contains keeping an error per non-matching
        // item about 90 times: 20 times tells a bounded validator from either.
        expect(growth).toBeLessThan(20 * body.length);
      },
    );

    it('answers a DTO tool whose 20,000 nested items are all invalid with ten errors and their count, in the result and the audit row', async () => {
      const url = `${server.baseUrl}/mcp`;
      const { sessionId } = await openSession(url);
      const reply = await post(
        url,
        callRequest('huge-order', 'order', { lines: Array.from({ length: 20_000 }, () => ({ sku: 1 })) }),
        { sessionId, headers: versionHeader() },
      );
      const json = reply.json as ToolCallReply;
      expect(json.result.isError).toBe(true);
      const text: string = json.result.content[0].text;
      expect(text).toMatch(
        /^Invalid arguments for tool "order": lines\.0\.sku: sku must be a string; lines\.1\.sku: sku must be a string; .* \(10 of 20000 errors listed\)$/,
      );
      expect(text.length).toBeLessThan(MESSAGE_BOUND);
      const [row] = await db.dataSource.query(
        `SELECT is_error, length(coalesce(response::text, '')) AS response_chars FROM mcp_events WHERE request->>'id' = 'huge-order'`,
      );
      expect(row.is_error).toBe(true);
      expect(row.response_chars).toBeLessThan(MESSAGE_BOUND + 500);
    });

    it('still lists up to ten errors of a small invalid value, with their count', async () => {
      const url = `${server.baseUrl}/mcp`;
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest('small-tags', 'tag', { tags: new Array(40).fill(7) }), {
        sessionId,
        headers: versionHeader(),
      });
      const json = reply.json as ToolCallReply;
      expect(json.result.isError).toBe(true);
      expect(json.result.content[0].text).toMatch(
        /^Invalid arguments for tool "tag": tags\.0: must be string; tags\.1: must be string; .*tags\.9: must be string \(10 of 40 errors listed\)$/,
      );
    });
  },
);

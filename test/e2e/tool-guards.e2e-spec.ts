import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Catch,
  Inject,
  Injectable,
  Scope,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type NestInterceptor,
  type PipeTransform,
} from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { tap } from 'rxjs';
import {
  getMcpContext,
  McpModule,
  McpPrompt,
  McpResource,
  McpResourceTemplate,
  McpTool,
  type McpAuthResult,
  type McpToolContext,
} from '../../src/mcp';
import { McpRpcError } from '../../src/mcp/errors';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { pollUntil } from '../support/polling';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const PEOPLE: Record<string, McpAuthResult> = {
  'token-ada': { key: 'ada', label: 'Ada', roles: ['admin', 'auditor'], scopes: [] },
  'token-bob': { key: 'bob', label: 'Bob', roles: ['staff'], scopes: [] },
};

const TEXT = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } as const;

/** Lets only admins through; what it saw is kept for the assertions. */
@Injectable()
class AdminGuard implements CanActivate {
  static readonly seen: Array<{
    type: string;
    phase?: string;
    method?: string;
    name?: string;
    principal?: string;
    arguments?: unknown;
    session?: string | null;
  }> = [];

  canActivate(context: ExecutionContext): boolean {
    const mcp = getMcpContext(context);
    AdminGuard.seen.push({
      type: context.getType(),
      phase: mcp?.phase,
      method: mcp?.method,
      name: mcp?.name,
      principal: mcp?.principal.key,
      arguments: mcp?.arguments,
      session: mcp?.sessionId,
    });
    return mcp?.principal.roles?.includes('admin') === true;
  }
}

@Injectable()
@UseGuards(AdminGuard)
class AdminTools {
  @McpTool({ description: 'Purges a cache', input: { type: 'object', properties: { cache: { type: 'string' } } } })
  purge({ cache }: { cache?: string }) {
    return `purged ${cache ?? 'everything'}`;
  }

  @McpTool({ description: 'Rotates the keys' })
  rotate() {
    return 'rotated';
  }

  @McpPrompt({
    name: 'incident',
    description: 'Starts an incident review',
    arguments: [{ name: 'severity', required: true }],
  })
  incident({ severity }: { severity: string }) {
    return `Review the ${severity} incident.`;
  }

  @McpResource({ uri: 'ops://secrets', name: 'secrets', mimeType: 'text/plain' })
  secrets() {
    return 'hunter2';
  }

  @McpResourceTemplate({
    uriTemplate: 'ops://hosts/{host}',
    name: 'host',
    complete: { host: (value) => ['db1', 'db2', 'web1'].filter((h) => h.startsWith(value)) },
  })
  host({ params }: { params: Record<string, string> }) {
    return `host ${params.host}`;
  }
}

@Injectable()
class PublicDocs {
  @McpPrompt({ name: 'greeting', description: 'Says hello' })
  greeting() {
    return 'Hello!';
  }

  @McpResource({ uri: 'docs://faq', name: 'faq', mimeType: 'text/plain' })
  faq() {
    return 'Ask away.';
  }
}

/** Where the timing interceptor writes. */
@Injectable()
class Timings {
  readonly entries: Array<{ tool: string; type: string; ms: number }> = [];
}

@Injectable()
class TimingInterceptor implements NestInterceptor {
  constructor(private readonly timings: Timings) {}

  intercept(context: ExecutionContext, next: CallHandler) {
    const started = process.hrtime.bigint();
    return next.handle().pipe(
      tap(() =>
        this.timings.entries.push({
          tool: getMcpContext(context)?.name ?? '?',
          type: context.getType(),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      ),
    );
  }
}

@Injectable()
class ShoutPipe implements PipeTransform<{ text: string }> {
  transform(value: { text: string }) {
    return { ...value, text: value.text.toUpperCase() };
  }
}

class RecordMissingError extends Error {}

@Catch(RecordMissingError)
class RecordMissingFilter implements ExceptionFilter {
  catch(error: RecordMissingError, host: ArgumentsHost) {
    return { content: [{ type: 'text', text: `No record: ${error.message} (${host.getType()})` }], isError: true };
  }
}

/** Answers calls with its own JSON-RPC error, lists pass. */
@Injectable()
class MaintenanceGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (getMcpContext(context)?.phase === 'list') return true;
    throw new McpRpcError(-32001, 'Down for maintenance');
  }
}

/** A singleton the request-scoped guard asks: who may use the quota tool. */
@Injectable()
class QuotaBook {
  allowed = new Set(['bob']);
}

/** A guard created per request: it gets the MCP request (the handler context) and a singleton. */
@Injectable({ scope: Scope.REQUEST })
class QuotaGuard implements CanActivate {
  static readonly requests: unknown[] = [];

  constructor(
    @Inject(REQUEST) private readonly request: McpToolContext | { phase: string },
    private readonly book: QuotaBook,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    QuotaGuard.requests.push(this.request);
    return this.book.allowed.has(getMcpContext(context)?.principal.key ?? '');
  }
}

@Injectable()
class OpsTools {
  @McpTool({ description: 'Audit log excerpt', roles: ['auditor'] })
  auditLog() {
    return 'the log';
  }

  @McpTool({ description: 'Echoes loudly', input: TEXT })
  @UsePipes(ShoutPipe)
  @UseInterceptors(TimingInterceptor)
  shout({ text }: { text: string }) {
    return text;
  }

  @McpTool({ description: 'Finds a record', input: TEXT })
  @UseFilters(RecordMissingFilter)
  find({ text }: { text: string }) {
    if (text === 'nobody') throw new RecordMissingError(text);
    return `found ${text}`;
  }

  @McpTool({ description: 'Uses the quota' })
  @UseGuards(QuotaGuard)
  quota(_args: unknown, ctx: McpToolContext) {
    return `quota used by ${ctx.principal.key}`;
  }

  @McpTool({ description: 'Under maintenance' })
  @UseGuards(MaintenanceGuard)
  maintained() {
    return 'never';
  }

  @McpTool({ description: 'For everyone' })
  open() {
    return 'open';
  }
}

describe('Nest guards, interceptors, pipes and filters on tools (real app, SDK client)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  const clients: Client[] = [];

  async function connect(token: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'guards-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  const text = (result: object) => (result as { content: Array<{ text: string }> }).content[0].text;

  let ada: Client;
  let bob: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: (token) => PEOPLE[token] ?? null })],
      providers: [
        AdminTools,
        OpsTools,
        PublicDocs,
        AdminGuard,
        MaintenanceGuard,
        Timings,
        TimingInterceptor,
        QuotaBook,
      ],
    });
    ada = await connect('token-ada');
    bob = await connect('token-bob');
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
    await db?.drop();
  });

  it('lists each principal the tools its guards and roles let it see', async () => {
    expect(await names(ada)).toEqual(['auditLog', 'find', 'maintained', 'open', 'purge', 'rotate', 'shout']);
    expect(await names(bob)).toEqual(['find', 'maintained', 'open', 'quota', 'shout']);
  });

  it('runs a class-level guard on calls, with the MCP context, and answers a refused call as an unknown tool', async () => {
    AdminGuard.seen.length = 0;
    expect(text(await ada.callTool({ name: 'purge', arguments: { cache: 'users' } }))).toBe('purged users');
    expect(AdminGuard.seen).toEqual([
      {
        type: 'mcp',
        phase: 'call',
        method: 'tools/call',
        name: 'purge',
        principal: 'ada',
        arguments: { cache: 'users' },
        session: expect.any(String),
      },
    ]);
    await expect(bob.callTool({ name: 'purge', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: purge'),
    });
    await expect(bob.callTool({ name: 'no-such-tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: no-such-tool'),
    });
  });

  it('evaluates guards with a list-time context', async () => {
    AdminGuard.seen.length = 0;
    await names(bob);
    expect(AdminGuard.seen).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'mcp',
          phase: 'list',
          method: 'tools/list',
          name: 'rotate',
          principal: 'bob',
          arguments: undefined,
        }),
      ]),
    );
  });

  it('hides guarded prompts, resources and templates from lists, and answers their refused reads as not found', async () => {
    expect((await ada.listPrompts()).prompts.map((p) => p.name)).toEqual(['incident', 'greeting']);
    expect((await bob.listPrompts()).prompts.map((p) => p.name)).toEqual(['greeting']);
    expect((await ada.listResources()).resources.map((r) => r.uri)).toEqual(['ops://secrets', 'docs://faq']);
    expect((await bob.listResources()).resources.map((r) => r.uri)).toEqual(['docs://faq']);
    expect((await ada.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'ops://hosts/{host}',
    ]);
    expect((await bob.listResourceTemplates()).resourceTemplates).toEqual([]);

    expect((await ada.getPrompt({ name: 'incident', arguments: { severity: 'minor' } })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Review the minor incident.' } },
    ]);
    await expect(ada.getPrompt({ name: 'incident' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Invalid arguments for prompt "incident"'),
    });
    // A refused caller learns nothing from its arguments: the answer is the unknown prompt's.
    await expect(bob.getPrompt({ name: 'incident' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt: incident'),
    });
    await expect(bob.getPrompt({ name: 'incident', arguments: { severity: 'minor' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt: incident'),
    });
    expect((await ada.readResource({ uri: 'ops://secrets' })).contents).toEqual([
      { uri: 'ops://secrets', mimeType: 'text/plain', text: 'hunter2' },
    ]);
    await expect(bob.readResource({ uri: 'ops://secrets' })).rejects.toMatchObject({
      code: -32002,
      data: { uri: 'ops://secrets' },
    });
    expect((await ada.readResource({ uri: 'ops://hosts/db1' })).contents).toMatchObject([
      { uri: 'ops://hosts/db1', text: 'host db1' },
    ]);
    await expect(bob.readResource({ uri: 'ops://hosts/db1' })).rejects.toMatchObject({ code: -32002 });
    expect((await bob.readResource({ uri: 'docs://faq' })).contents).toMatchObject([{ text: 'Ask away.' }]);
    // Completion and subscription see the same handlers as the lists.
    const hostRef = {
      ref: { type: 'ref/resource' as const, uri: 'ops://hosts/{host}' },
      argument: { name: 'host', value: 'db' },
    };
    expect((await ada.complete(hostRef)).completion.values).toEqual(['db1', 'db2']);
    await expect(bob.complete(hostRef)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown resource template: ops://hosts/{host}'),
    });
    await expect(ada.subscribeResource({ uri: 'ops://secrets' })).resolves.toEqual({});
    await expect(bob.subscribeResource({ uri: 'ops://secrets' })).rejects.toMatchObject({ code: -32002 });
    await expect(bob.subscribeResource({ uri: 'docs://faq' })).resolves.toEqual({});
    const [refused] = await db.dataSource.query(
      `SELECT note FROM mcp_events WHERE principal_key = 'bob' AND method = 'resources/read' AND request->'params'->>'uri' = 'ops://secrets'`,
    );
    expect(refused.note).toBe('Refused resource "ops://secrets" by AdminGuard');
  });

  it('answers the McpRpcError a guard throws', async () => {
    await expect(bob.callTool({ name: 'maintained', arguments: {} })).rejects.toMatchObject({
      code: -32001,
      message: expect.stringContaining('Down for maintenance'),
    });
  });

  it('refuses a roles-guarded tool to a principal without one of the roles', async () => {
    expect(text(await ada.callTool({ name: 'auditLog', arguments: {} }))).toBe('the log');
    await expect(bob.callTool({ name: 'auditLog', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('passes the arguments through a pipe and times the call in an interceptor', async () => {
    const timings = server.app.get(Timings);
    expect(text(await bob.callTool({ name: 'shout', arguments: { text: 'hello' } }))).toBe('HELLO');
    expect(timings.entries).toEqual([{ tool: 'shout', type: 'mcp', ms: expect.any(Number) }]);
    expect(timings.entries[0].ms).toBeGreaterThanOrEqual(0);
  });

  it('maps a thrown error through an exception filter', async () => {
    expect(text(await bob.callTool({ name: 'find', arguments: { text: 'ann' } }))).toBe('found ann');
    const missing = await bob.callTool({ name: 'find', arguments: { text: 'nobody' } });
    expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'No record: nobody (mcp)' }] });
  });

  it('runs a request-scoped guard with the MCP request and an injected service', async () => {
    QuotaGuard.requests.length = 0;
    expect(text(await bob.callTool({ name: 'quota', arguments: {} }))).toBe('quota used by bob');
    await expect(ada.callTool({ name: 'quota', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    expect(QuotaGuard.requests).toHaveLength(2);
    expect(QuotaGuard.requests[0]).toMatchObject({ principal: { key: 'bob' }, requestId: expect.anything() });
    server.app.get(QuotaBook).allowed.add('ada');
    expect(await names(ada)).toContain('quota');
    expect(text(await ada.callTool({ name: 'quota', arguments: {} }))).toBe('quota used by ada');
  });

  it('applies the same rules to stateless (2026-07-28) requests, with a private list and an audited refusal', async () => {
    const url = `${server.baseUrl}/mcp`;
    const list = await statelessPost(url, statelessRequest(1, 'tools/list'), { token: 'token-bob' });
    expect(list.status).toBe(200);
    expect(list.json.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'find',
      'maintained',
      'open',
      'quota',
      'shout',
    ]);
    expect(list.json.result.cacheScope).toBe('private');
    const refused = await statelessPost(
      url,
      statelessRequest(2, 'tools/call', { name: 'purge', arguments: { cache: 'stateless' } }),
      { token: 'token-bob' },
    );
    expect(refused.json.error).toMatchObject({ code: -32602, message: 'Unknown tool: purge' });
    const [row] = await db.dataSource.query(
      `SELECT note, session_ref FROM mcp_events WHERE principal_key = 'bob' AND request->'params'->'arguments'->>'cache' = 'stateless'`,
    );
    expect(row).toEqual({ note: 'Refused tool "purge" by AdminGuard', session_ref: null });
  });

  it('records which guard refused a call in its mcp_events row, and never tells the caller', async () => {
    await expect(bob.callTool({ name: 'rotate', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const rows = await pollUntil('the refused call is audited', async () => {
      const found: Array<{ note: string; error_code: number; response: { error: { message: string } } }> =
        await db.dataSource.query(
          `SELECT note, error_code, response FROM mcp_events WHERE method = 'tools/call' AND principal_key = 'bob' AND request->'params'->>'name' = 'rotate'`,
        );
      return found.length ? found : undefined;
    });
    expect(rows).toEqual([
      { note: 'Refused tool "rotate" by AdminGuard', error_code: -32602, response: expect.anything() },
    ]);
    expect(JSON.stringify(rows[0].response)).not.toContain('AdminGuard');
    const [roles] = await db.dataSource.query(
      `SELECT note FROM mcp_events WHERE principal_key = 'bob' AND request->'params'->>'name' = 'auditLog'`,
    );
    expect(roles.note).toBe('Refused tool "auditLog" by roles (needs one of auditor)');
  });
});

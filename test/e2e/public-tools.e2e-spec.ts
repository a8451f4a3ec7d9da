import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  MCP_ENTITIES,
  McpModule,
  McpPrompt,
  McpResource,
  McpTool,
  type McpAuthResult,
  type McpToolContext,
} from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { callRequest, initializeRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const PEOPLE: Record<string, McpAuthResult> = {
  'token-ada': { key: 'ada', label: 'Ada', roles: ['admin'], scopes: ['mcp:tools'] },
  'token-bob': { key: 'bob', label: 'Bob', roles: [], scopes: ['mcp:tools'] },
};
const auth = (token: string) => PEOPLE[token] ?? null;

/** Opens a 2025-11-25 session without an Authorization header (`post` leaves it out for a null token). */
const anonymousSession = (at: string) => openSession(at, null as unknown as string);

const PUBLIC_URL = 'https://mcp.example.com';
const oauth = {
  publicUrl: PUBLIC_URL,
  authorizationServers: ['https://as.example.com'],
  requiredScopes: ['mcp:tools'],
};

/** What a request without a token gets on each mount (the closed one is the reference: no `anonymous`). */
const OPEN_CHALLENGE =
  'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"';
const CLOSED_CHALLENGE =
  'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/closed/mcp", scope="mcp:tools"';
const INVALID_TOKEN_CHALLENGE =
  'Bearer error="invalid_token", error_description="The access token is invalid, expired or not issued for this resource", ' +
  'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"';

/**
 * An app-wide guard written for HTTP only, as many apps have: it refuses any other context. A
 * handler that only carries the built-in guard of `public` must not start running it.
 */
@Injectable()
class HttpOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.getType() === 'http';
  }
}

@Injectable()
class CatalogTools {
  @McpTool({ description: 'The weather, for everyone', public: true })
  forecast(_args: unknown, ctx: McpToolContext) {
    return `sunny for ${ctx.principal.key} (${ctx.principal.label})`;
  }

  @McpTool({ description: 'The ledger, for signed-in callers' })
  ledger() {
    return 'the ledger';
  }

  @McpTool({ description: 'Purges a cache, for admins', roles: ['admin'] })
  purge() {
    return 'purged';
  }

  @McpPrompt({ name: 'welcome', description: 'Greets anyone', public: true })
  welcome() {
    return 'Welcome!';
  }

  @McpPrompt({ name: 'review', description: 'Reviews code' })
  review() {
    return 'Review this.';
  }

  @McpResource({ uri: 'docs://faq', name: 'faq', mimeType: 'text/plain', public: true })
  faq() {
    return 'Ask away.';
  }

  @McpResource({ uri: 'ops://secrets', name: 'secrets', mimeType: 'text/plain' })
  secrets() {
    return 'hunter2';
  }
}

describe('public handlers and anonymous callers (real app, PostgreSQL, SDK client)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  const clients: Client[] = [];

  async function connect(token: string | null): Promise<Client> {
    const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
    const client = new Client({ name: 'public-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }
  const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
  const text = (result: object) => (result as { content: Array<{ text: string }> }).content[0].text;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({ auth, anonymous: true, providers: [CatalogTools], oauth }),
        McpModule.forRoot({ mount: 'closed', path: '/closed/mcp', auth, providers: [CatalogTools], oauth }),
        McpModule.forRoot({ mount: 'plain', path: '/plain/mcp', auth, anonymous: true, providers: [CatalogTools] }),
      ],
      providers: [CatalogTools, { provide: APP_GUARD, useClass: HttpOnlyGuard }],
    });
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
    await db?.drop();
  });

  it('shows the anonymous principal only the public handlers, and lets it use them (2025-11-25 session)', async () => {
    const anonymous = await connect(null);
    expect(await toolNames(anonymous)).toEqual(['forecast']);
    expect(text(await anonymous.callTool({ name: 'forecast', arguments: {} }))).toBe('sunny for anonymous (anonymous)');
    expect((await anonymous.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['welcome']);
    expect((await anonymous.getPrompt({ name: 'welcome' })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Welcome!' } },
    ]);
    await expect(anonymous.getPrompt({ name: 'review' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt: review'),
    });
    expect((await anonymous.listResources()).resources.map((resource) => resource.uri)).toEqual(['docs://faq']);
    expect((await anonymous.readResource({ uri: 'docs://faq' })).contents).toEqual([
      { uri: 'docs://faq', mimeType: 'text/plain', text: 'Ask away.' },
    ]);
    await expect(anonymous.readResource({ uri: 'ops://secrets' })).rejects.toMatchObject({
      code: -32002,
      data: { uri: 'ops://secrets' },
    });
  });

  it('shows an authenticated principal the public tools as well as the others its roles allow', async () => {
    const ada = await connect('token-ada');
    const bob = await connect('token-bob');
    expect(await toolNames(ada)).toEqual(['forecast', 'ledger', 'purge']);
    expect(await toolNames(bob)).toEqual(['forecast', 'ledger']);
    expect(text(await bob.callTool({ name: 'forecast', arguments: {} }))).toBe('sunny for bob (Bob)');
    expect(text(await bob.callTool({ name: 'ledger', arguments: {} }))).toBe('the ledger');
    expect((await bob.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['welcome', 'review']);
    expect((await bob.listResources()).resources.map((resource) => resource.uri)).toEqual([
      'docs://faq',
      'ops://secrets',
    ]);
  });

  it('answers an anonymous call of a tool that is not public (or does not exist) 401 with the challenge of a request without a token', async () => {
    const { sessionId } = await anonymousSession(url);
    for (const [id, name] of [
      [10, 'ledger'],
      [11, 'purge'],
      [12, 'no-such-tool'],
    ] as const) {
      const refused = await post(url, callRequest(id, name), { token: null, sessionId, headers: versionHeader() });
      expect({
        status: refused.status,
        challenge: refused.headers.get('www-authenticate'),
        body: refused.text,
      }).toEqual({ status: 401, challenge: OPEN_CHALLENGE, body: '' });
    }
    const allowed = await post(url, callRequest(13, 'forecast'), { token: null, sessionId, headers: versionHeader() });
    expect(allowed.status).toBe(200);
    expect(allowed.json).toEqual({
      jsonrpc: '2.0',
      id: 13,
      result: { content: [{ type: 'text', text: 'sunny for anonymous (anonymous)' }] },
    });
  });

  it('answers the bare Bearer challenge on a mount without oauth', async () => {
    const plain = `${server.baseUrl}/plain/mcp`;
    const { sessionId } = await anonymousSession(plain);
    const refused = await post(plain, callRequest(1, 'ledger'), { token: null, sessionId, headers: versionHeader() });
    expect({ status: refused.status, challenge: refused.headers.get('www-authenticate'), body: refused.text }).toEqual({
      status: 401,
      challenge: 'Bearer',
      body: '',
    });
  });

  it('still refuses a bad token, or an Authorization header without a bearer token, instead of treating it as anonymous', async () => {
    const badToken = await post(url, initializeRequest(), { token: 'token-nobody' });
    expect({
      status: badToken.status,
      challenge: badToken.headers.get('www-authenticate'),
      body: badToken.text,
    }).toEqual({ status: 401, challenge: INVALID_TOKEN_CHALLENGE, body: '' });
    const basic = await post(url, initializeRequest(), {
      token: null,
      headers: { Authorization: 'Basic YWRhOnNlY3JldA==' },
    });
    expect({ status: basic.status, challenge: basic.headers.get('www-authenticate'), body: basic.text }).toEqual({
      status: 401,
      challenge: OPEN_CHALLENGE,
      body: '',
    });
    const empty = await post(url, initializeRequest(), { token: null, headers: { Authorization: '' } });
    expect({ status: empty.status, challenge: empty.headers.get('www-authenticate') }).toEqual({
      status: 401,
      challenge: OPEN_CHALLENGE,
    });
  });

  it('still answers 401 to a request without a token on a mount without anonymous', async () => {
    const closed = `${server.baseUrl}/closed/mcp`;
    const refused = await post(closed, initializeRequest(), { token: null });
    expect({ status: refused.status, challenge: refused.headers.get('www-authenticate'), body: refused.text }).toEqual({
      status: 401,
      challenge: CLOSED_CHALLENGE,
      body: '',
    });
    const stateless = await statelessPost(
      closed,
      statelessRequest(1, 'tools/call', { name: 'forecast', arguments: {} }),
      { token: null },
    );
    expect({ status: stateless.status, challenge: stateless.headers.get('www-authenticate') }).toEqual({
      status: 401,
      challenge: CLOSED_CHALLENGE,
    });
  });

  it('binds an anonymous session to the anonymous principal and audits its calls under that principal', async () => {
    const { sessionId } = await anonymousSession(url);
    const [session] = await db.dataSource.query(
      `SELECT id, mount, principal_key, principal_label FROM mcp_inbound_sessions WHERE session_id = $1`,
      [sessionId],
    );
    expect(session).toEqual({
      id: expect.any(String),
      mount: 'default',
      principal_key: 'anonymous',
      principal_label: 'anonymous',
    });
    // A signed-in caller is another principal: the anonymous session is unknown to it.
    const stranger = await post(url, callRequest(20, 'forecast'), {
      token: 'token-bob',
      sessionId,
      headers: versionHeader(),
    });
    expect(stranger.status).toBe(404);
    const call = await post(url, callRequest('audited-call', 'forecast'), {
      token: null,
      sessionId,
      headers: versionHeader(),
    });
    expect(call.status).toBe(200);
    const rows = await db.dataSource.query(
      `SELECT principal_key, method, error_code, note FROM mcp_events WHERE session_ref = $1 AND request->>'id' = 'audited-call'`,
      [session.id],
    );
    expect(rows).toEqual([{ principal_key: 'anonymous', method: 'tools/call', error_code: null, note: null }]);
    // A refused read is audited with the built-in guard that refused it.
    const read = await post(
      url,
      { jsonrpc: '2.0', id: 'audited-read', method: 'resources/read', params: { uri: 'ops://secrets' } },
      { token: null, sessionId, headers: versionHeader() },
    );
    expect(read.json.error).toMatchObject({ code: -32002 });
    const [refused] = await db.dataSource.query(
      `SELECT principal_key, note FROM mcp_events WHERE session_ref = $1 AND request->>'id' = 'audited-read'`,
      [session.id],
    );
    expect(refused).toEqual({
      principal_key: 'anonymous',
      note: 'Refused resource "ops://secrets" by McpAuthenticatedGuard',
    });
  });

  it('applies the same rules to stateless (2026-07-28) requests without a token', async () => {
    const list = await statelessPost(url, statelessRequest(1, 'tools/list'), { token: null });
    expect(list.status).toBe(200);
    expect(list.json.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['forecast']);
    expect(list.json.result.cacheScope).toBe('private');
    const call = await statelessPost(
      url,
      statelessRequest('stateless-call', 'tools/call', { name: 'forecast', arguments: {} }),
      { token: null },
    );
    expect(call.status).toBe(200);
    expect(call.json.result.content).toEqual([{ type: 'text', text: 'sunny for anonymous (anonymous)' }]);
    const [row] = await db.dataSource.query(
      `SELECT principal_key, session_ref FROM mcp_events WHERE request->>'id' = 'stateless-call'`,
    );
    expect(row).toEqual({ principal_key: 'anonymous', session_ref: null });
    const refused = await statelessPost(url, statelessRequest(3, 'tools/call', { name: 'ledger', arguments: {} }), {
      token: null,
    });
    expect({ status: refused.status, challenge: refused.headers.get('www-authenticate'), body: refused.text }).toEqual({
      status: 401,
      challenge: OPEN_CHALLENGE,
      body: '',
    });
    const signedIn = await statelessPost(url, statelessRequest(4, 'tools/list'), { token: 'token-bob' });
    expect(signedIn.json.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['forecast', 'ledger']);
  });
});

describe('public handlers: configuration errors', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  async function bootFailure(provider: Type<unknown>): Promise<unknown> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ auth, anonymous: true, providers: [provider] }),
      ],
      providers: [provider],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
    } catch (error) {
      return error;
    } finally {
      await app.close();
    }
    throw new Error('expected the app to fail at boot');
  }

  it('refuses a public tool that also asks for scopes, naming it', async () => {
    @Injectable()
    class ScopedPublic {
      @McpTool({ description: 'Both', public: true, scopes: ['mcp:admin'] })
      both() {
        return 'never';
      }
    }
    const error = await bootFailure(ScopedPublic);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toBe(
      '@McpTool "both" on ScopedPublic#both is public and also asks for scopes, which the anonymous principal never holds. ' +
        'Remove public: true to keep it for signed-in callers, or remove scopes to open it to everyone.',
    );
  });

  it('refuses a public tool that also asks for roles, naming it', async () => {
    @Injectable()
    class RolePublic {
      @McpTool({ name: 'ops.purge', description: 'Both', public: true, roles: ['admin'] })
      purge() {
        return 'never';
      }
    }
    const error = await bootFailure(RolePublic);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toBe(
      '@McpTool "ops.purge" on RolePublic#purge is public and also asks for roles, which the anonymous principal never holds. ' +
        'Remove public: true to keep it for signed-in callers, or remove roles to open it to everyone.',
    );
  });

  it('refuses a public flag that is not a boolean', async () => {
    @Injectable()
    class OddPrompt {
      @McpPrompt({ name: 'odd', public: 'yes' as unknown as boolean })
      odd() {
        return 'never';
      }
    }
    const error = await bootFailure(OddPrompt);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toBe('@McpPrompt on OddPrompt#odd: public must be true or false, got "yes".');
  });
});

import {
  Client,
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type FetchLike,
} from '@modelcontextprotocol/client';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as jose from 'jose';
import { JwtVerifier, MCP_ENTITIES, McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { freeLoopbackPort } from '../support/child-process';
import { initializeRequest, post } from '../support/mcp-wire';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Tells the caller what the module made of its token. */
@Injectable()
class WhoTools {
  @McpTool({ description: 'The principal of the call', input: { type: 'object', properties: {} } })
  whoami(_input: unknown, ctx: McpToolContext): string {
    const { key, label, scopes, roles } = ctx.principal;
    return JSON.stringify({ key, label, scopes, roles });
  }
}

const AGENT = {
  client_id: 'sdk2-agent',
  client_secret: 'sdk2-agent-secret-0123456789abcdef',
  scope: 'mcp:tools',
} satisfies OidcClient;
const ELSEWHERE = 'https://elsewhere.example/mcp';

/** One HTTP exchange the SDK client made, as `METHOD where [JSON-RPC method] -> status [OAuth error]`. */
type Exchange = string;

/**
 * The official SDK 2.x client (`@modelcontextprotocol/client`) with its own OAuth support against
 * a mount that is an OAuth resource server: from a bare 401 it reads the Protected Resource
 * Metadata, finds the authorization server (a real oidc-provider), gets a client-credentials token
 * for the mount's resource and calls a tool, on the 2025 revision and on the stateless one.
 */
describe('official SDK 2.x client with OAuth against an McpModule resource server', () => {
  let db: TestDatabase;
  let as: TestAuthorizationServer;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    as = await startAuthorizationServer([AGENT], {
      [`${base}/mcp`]: { scope: 'mcp:tools' },
      [ELSEWHERE]: { scope: 'mcp:tools' },
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({
          auth: JwtVerifier,
          oauth: { publicUrl: base, authorizationServers: [as.issuer], requiredScopes: ['mcp:tools'] },
        }),
      ],
      providers: [WhoTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await app.listen(port, '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await as?.stop();
    await db?.drop();
  });

  /**
   * The real fetch, recording each exchange the client makes as `METHOD where [rpc method] -> status
   * [OAuth error]`, with the app's origin written APP and the authorization server's AS.
   */
  function recordingFetch(seen: Exchange[]): FetchLike {
    return async (url, init) => {
      const response = await fetch(url, init);
      const rpc =
        typeof init?.body === 'string' && String(url) === `${base}/mcp` ? ` ${JSON.parse(init.body).method}` : '';
      const error = /error="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
      const where = String(url).replace(base, 'APP').replace(as.issuer, 'AS');
      seen.push(`${init?.method ?? 'GET'} ${where}${rpc} -> ${response.status}${error ? ` ${error}` : ''}`);
      return response;
    };
  }

  function credentials(): ClientCredentialsProvider {
    return new ClientCredentialsProvider({
      clientId: AGENT.client_id,
      clientSecret: AGENT.client_secret,
      scope: 'mcp:tools',
      expectedIssuer: as.issuer,
    });
  }

  /** What `whoami` answers to a token of AGENT. */
  const AGENT_PRINCIPAL = [
    {
      type: 'text',
      text: JSON.stringify({ key: AGENT.client_id, label: AGENT.client_id, scopes: ['mcp:tools'], roles: [] }),
    },
  ];

  /** The discovery and token exchanges that follow the first 401 (RFC 9728, then RFC 8414, then the token). */
  const DISCOVERY = [
    'GET APP/.well-known/oauth-protected-resource/mcp -> 200',
    'GET AS/.well-known/oauth-authorization-server -> 200',
    'POST AS/token -> 200',
  ];

  it('on the 2025 revision: from a bare 401 it discovers the authorization server, gets a token for the mount and calls a tool', async () => {
    const seen: Exchange[] = [];
    const issuedBefore = as.tokensIssued(AGENT.client_id);
    const provider = credentials();
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: provider,
      fetch: recordingFetch(seen),
    });
    const client = new Client({ name: 'sdk2-oauth-e2e', version: '2.0.0' });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      expect(transport.sessionId).toEqual(expect.any(String));
      expect(jose.decodeJwt(provider.tokens()!.access_token)).toMatchObject({
        aud: `${base}/mcp`,
        iss: as.issuer,
        client_id: AGENT.client_id,
        scope: 'mcp:tools',
      });
      expect((await client.callTool({ name: 'whoami', arguments: {} })).content).toEqual(AGENT_PRINCIPAL);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
    expect(seen.slice(0, 6)).toEqual([
      'POST APP/mcp initialize -> 401',
      ...DISCOVERY,
      'POST APP/mcp initialize -> 200',
      'POST APP/mcp notifications/initialized -> 202',
    ]);
    // The standalone GET stream opens in the background, so its place among the rest is not fixed.
    expect(seen.slice(6).sort()).toEqual([
      'DELETE APP/mcp -> 204',
      'GET APP/mcp -> 200',
      'POST APP/mcp tools/call -> 200',
    ]);
    expect(as.tokensIssued(AGENT.client_id) - issuedBefore).toBe(1);
  });

  it('on the stateless revision (2026-07-28): the same discovery from the 401 of server/discover, and no session', async () => {
    const seen: Exchange[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: credentials(),
      fetch: recordingFetch(seen),
    });
    const client = new Client(
      { name: 'sdk2-oauth-e2e', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2026-07-28');
      expect(transport.sessionId).toBeUndefined();
      expect((await client.callTool({ name: 'whoami', arguments: {} })).content).toEqual(AGENT_PRINCIPAL);
    } finally {
      await client.close();
    }
    expect(seen).toEqual([
      'POST APP/mcp server/discover -> 401',
      ...DISCOVERY,
      'POST APP/mcp server/discover -> 200',
      'POST APP/mcp tools/call -> 200',
    ]);
    // The audit trail names the token's client as the principal, with no session (the 401 left no row).
    const rows: Array<{ method: string; principal_key: string; session_ref: string | null }> =
      await db.dataSource.query(
        `SELECT method, principal_key, session_ref FROM mcp_events WHERE protocol_version = '2026-07-28' AND kind = 'request' ORDER BY created_at`,
      );
    expect(rows).toEqual([
      { method: 'server/discover', principal_key: AGENT.client_id, session_ref: null },
      { method: 'tools/call', principal_key: AGENT.client_id, session_ref: null },
    ]);
  });

  it('refuses a token issued for another resource: 401 invalid_token, and the SDK client reports it unauthorized', async () => {
    const token = await as.token(AGENT, ELSEWHERE, 'mcp:tools');
    expect(jose.decodeJwt(token).aud).toBe(ELSEWHERE);
    const reply = await post(`${base}/mcp`, initializeRequest(), { token });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="The access token is invalid, expired or not issued for this resource", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
    );

    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: { token: async () => token },
    });
    const client = new Client({ name: 'sdk2-oauth-e2e-wrong', version: '2.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('an OAuth provider holding a token for another resource is refused, then gets one for this mount and goes on', async () => {
    const seen: Exchange[] = [];
    const provider = credentials();
    provider.saveTokens({ access_token: await as.token(AGENT, ELSEWHERE, 'mcp:tools'), token_type: 'Bearer' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: provider,
      fetch: recordingFetch(seen),
    });
    const client = new Client(
      { name: 'sdk2-oauth-e2e', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(transport);
    try {
      expect((await client.callTool({ name: 'whoami', arguments: {} })).content).toEqual(AGENT_PRINCIPAL);
    } finally {
      await client.close();
    }
    expect(seen).toEqual([
      'POST APP/mcp server/discover -> 401 invalid_token',
      ...DISCOVERY,
      'POST APP/mcp server/discover -> 200',
      'POST APP/mcp tools/call -> 200',
    ]);
    expect(jose.decodeJwt(provider.tokens()!.access_token).aud).toBe(`${base}/mcp`);
  });
});

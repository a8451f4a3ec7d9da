import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  Client as Client2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransport2,
  UnauthorizedError as UnauthorizedError2,
} from '@modelcontextprotocol/client';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as jose from 'jose';
import {
  JwtVerifier,
  MCP_ENTITIES,
  McpAuthorizationServerModule,
  McpModule,
  McpTool,
  McpAuthorizationServer,
  type McpAuthorizationServerModuleOptions,
  type McpModuleOptions,
  type McpToolContext,
} from '../../src/mcp';
import { McpTokenCipher } from '../../src/mcp/token-cipher';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { CapturingLogger } from '../support/capturing-logger';
import { MemoryOAuthClientProvider, signInThrough } from '../support/browserless-user-agent';
import { freeLoopbackPort } from '../support/child-process';
import { initializeRequest, post } from '../support/mcp-wire';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(120_000);

/** Tells the caller what the module made of its token. */
@Injectable()
class WhoTools {
  @McpTool({ description: 'The principal of the call', input: { type: 'object', properties: {} } })
  whoami(_input: unknown, ctx: McpToolContext): string {
    const { key, label, scopes, roles } = ctx.principal;
    return JSON.stringify({ key, label, scopes, roles });
  }
}

/** The keys every replica of the tests seals the signing and cookie keys with. */
const ENCRYPTION_KEYS = [{ id: 'e2e-1', key: randomBytes(32).toString('base64') }];

/** Where the MCP clients of the tests say they are sent back (never opened: the user agent stops there). */
const CLIENT_REDIRECT = 'http://127.0.0.1:1/callback';

/**
 * The app as the authorization server of its own mount (McpAuthorizationServerModule on
 * oidc-provider, state in PostgreSQL), users signing in at an upstream OpenID Connect provider (a
 * second, real oidc-provider): the official SDK clients meet a 401, discover, register, sign in
 * through a browserless user agent, get a token and call a tool.
 */
describe('McpAuthorizationServerModule', () => {
  let db: TestDatabase;
  let upstream: TestAuthorizationServer;
  let upstreamClient: OidcClient;
  const apps: INestApplication[] = [];
  let base: string;
  let issuer: string;
  let rotationPort: number;
  const logger = new CapturingLogger();
  /** Every access and refresh token the tests were issued, to look for in the logs and the rows. */
  const issued = new Set<string>();
  /** The tokens the SDK clients of the tests held. */
  const seenTokens: string[] = [];
  let bobTokens: { access_token: string; refresh_token?: string };

  async function startApp(
    port: number,
    extra: Partial<McpAuthorizationServerModuleOptions> = {},
    auth: McpModuleOptions['auth'] = JwtVerifier,
  ): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, extra: { max: 4 } }),
        McpAuthorizationServerModule.forRoot({
          publicUrl: base,
          upstream: {
            issuer: upstream.issuer,
            clientId: upstreamClient.client_id,
            clientSecret: upstreamClient.client_secret!,
            scopes: ['openid'],
          },
          principal: (claims, upstreamIssuer) => ({
            key: `${upstreamIssuer}#${String(claims.sub)}`,
            label: `user ${String(claims.sub)}`,
            roles: claims.sub === 'alice' ? ['admin'] : [],
            // zed may be granted nothing.
            ...(claims.sub === 'zed' ? { scopes: [] } : {}),
          }),
          allowLoopbackHttp: true,
          encryptionKeys: ENCRYPTION_KEYS,
          ...extra,
        }),
        McpModule.forRoot({
          auth,
          oauth: { publicUrl: base, requiredScopes: ['mcp:tools'] },
        }),
        // A second mount: tokens are bound to one of them.
        McpModule.forRoot({
          mount: 'admin',
          path: '/admin/mcp',
          auth: JwtVerifier,
          oauth: { publicUrl: base, requiredScopes: ['mcp:tools'] },
          providers: [WhoTools],
        }),
      ],
      providers: [WhoTools],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.listen(port, '127.0.0.1');
    apps.push(app);
    return app;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    issuer = `${base}/oauth`;
    rotationPort = await freeLoopbackPort();
    upstreamClient = {
      client_id: 'durable-mcp-as',
      client_secret: 'durable-mcp-as-secret-0123456789abcdef',
      scope: 'openid',
      // The rotation test's app gets a port of its own.
      redirect_uris: [`${issuer}/upstream/callback`, `http://127.0.0.1:${rotationPort}/oauth/upstream/callback`],
    };
    upstream = await startAuthorizationServer([upstreamClient], {});
    await startApp(port);
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await upstream?.stop();
    await db?.drop();
  });

  /** Signs `user` in at the upstream provider for the authorization URL the SDK made; the code it came back with. */
  async function signIn(provider: MemoryOAuthClientProvider, user: string): Promise<string> {
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === upstream.issuer ? { 'x-test-user': user } : {}),
    );
    const back = new URL(url);
    expect(back.searchParams.get('error')).toBeNull();
    return back.searchParams.get('code')!;
  }

  it("names itself in the mount's Protected Resource Metadata and serves RFC 8414 metadata at the host's well-known path", async () => {
    const prm = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [issuer] });
    const reply = await fetch(`${base}/.well-known/oauth-authorization-server/oauth`);
    expect(reply.status).toBe(200);
    const metadata = (await reply.json()) as OAuthMetadata;
    expect(metadata).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/reg`,
      jwks_uri: `${issuer}/jwks`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['mcp:tools']));
    // OAuth 2.1: the code flow only, no implicit or hybrid response.
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.grant_types_supported).not.toContain('implicit');
  });

  it('refuses to register a client for the implicit grant or a hybrid response (OAuth 2.1 has neither)', async () => {
    for (const [responseTypes, grantTypes] of [
      [['id_token'], ['implicit']],
      [['code id_token'], ['authorization_code', 'implicit']],
    ]) {
      const reply = await fetch(`${issuer}/reg`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          application_type: 'native',
          response_types: responseTypes,
          grant_types: grantTypes,
          redirect_uris: ['http://127.0.0.1:5555/cb'],
          token_endpoint_auth_method: 'none',
        }),
      });
      expect(reply.status).toBe(400);
      expect(await reply.json()).toMatchObject({ error: 'invalid_client_metadata' });
    }
  });

  it('SDK 1.x: 401, discovery, dynamic registration, sign-in upstream, token, and a tool call on 2025-11-25', async () => {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'as-e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.clientInformation()?.client_id).toEqual(expect.any(String));
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.href.startsWith(`${issuer}/auth?`)).toBe(true);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${base}/mcp`);

    await first.finishAuth(await signIn(provider, 'alice'));
    const token = provider.tokens()!.access_token;
    seenTokens.push(token, provider.tokens()!.refresh_token!);
    expect(jose.decodeJwt(token)).toMatchObject({
      iss: issuer,
      aud: `${base}/mcp`,
      sub: `${upstream.issuer}#alice`,
      scope: 'mcp:tools',
      name: 'user alice',
      roles: ['admin'],
    });
    expect(provider.tokens()!.refresh_token).toEqual(expect.any(String));

    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'as-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual({
        key: `${upstream.issuer}#alice`,
        label: 'user alice',
        scopes: ['mcp:tools'],
        roles: ['admin'],
      });
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('SDK 2.x: the same flow on the stateless revision (2026-07-28), and its token on a 2025-11-25 session', async () => {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport2(new URL(`${base}/mcp`), { authProvider: provider });
    const pinned = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };
    await expect(new Client2({ name: 'as-e2e-2', version: '2.0.0' }, pinned).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError2,
    );
    expect(provider.clientInformation()?.client_id).toEqual(expect.any(String));
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === upstream.issuer ? { 'x-test-user': 'bob' } : {}),
    );
    // RFC 9207: the answer names the issuer, which the 2.x client checks before redeeming the code.
    expect(new URL(url).searchParams.get('iss')).toBe(issuer);
    await first.finishAuth(new URL(url).searchParams);

    const transport = new StreamableHTTPClientTransport2(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client2({ name: 'as-e2e-2', version: '2.0.0' }, pinned);
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe('2026-07-28');
      expect(transport.sessionId).toBeUndefined();
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual({
        key: `${upstream.issuer}#bob`,
        label: 'user bob',
        scopes: ['mcp:tools'],
        roles: [],
      });
    } finally {
      await client.close();
    }
    // The same token on a 2025-11-25 session of the 2.x client.
    const sessionTransport = new StreamableHTTPClientTransport2(new URL(`${base}/mcp`), { authProvider: provider });
    const sessionClient = new Client2({ name: 'as-e2e-2', version: '2.0.0' });
    await sessionClient.connect(sessionTransport);
    try {
      expect(sessionTransport.protocolVersion).toBe('2025-11-25');
      const result = await sessionClient.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0].text).key).toBe(`${upstream.issuer}#bob`);
    } finally {
      await sessionTransport.terminateSession();
      await sessionClient.close();
    }
    bobTokens = provider.tokens()!;
  });

  it('a second replica on the same database accepts the token and refreshes it (the old refresh token is spent)', async () => {
    const port = await freeLoopbackPort();
    await startApp(port);
    const replica = `http://127.0.0.1:${port}`;
    const call = async (token: string) => {
      const reply = await statelessPost(
        `${replica}/mcp`,
        statelessRequest(1, 'tools/call', { name: 'whoami', arguments: {} }),
        { token },
      );
      expect(reply.status).toBe(200);
      return JSON.parse(reply.json.result.content[0].text).key as string;
    };
    expect(await call(bobTokens.access_token)).toBe(`${upstream.issuer}#bob`);

    const refresh = (refreshToken: string) =>
      fetch(`${replica}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: jose.decodeJwt(bobTokens.access_token).client_id as string,
          resource: `${base}/mcp`,
        }).toString(),
      });
    const reply = await refresh(bobTokens.refresh_token!);
    expect(reply.status).toBe(200);
    const refreshed = (await reply.json()) as { access_token: string; refresh_token: string };
    seenTokens.push(refreshed.access_token, refreshed.refresh_token);
    expect(refreshed.refresh_token).not.toBe(bobTokens.refresh_token);
    expect(jose.decodeJwt(refreshed.access_token)).toMatchObject({
      iss: issuer,
      aud: `${base}/mcp`,
      sub: `${upstream.issuer}#bob`,
      name: 'user bob',
    });
    // Signed with the same shared key: both replicas accept it.
    expect(await call(refreshed.access_token)).toBe(`${upstream.issuer}#bob`);
    const onFirst = await post(`${base}/mcp`, initializeRequest(), { token: refreshed.access_token });
    expect(onFirst.status).toBe(200);

    const again = await refresh(bobTokens.refresh_token!);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
  });

  /**
   * Serves a Client ID Metadata Document naming its own URL, an https URL as the draft requires
   * (the test configuration fetches it over http on loopback); `fetches` lists the paths read.
   */
  async function serveClientMetadata(
    name: string,
  ): Promise<{ documentUrl: string; fetches: string[]; close(): Promise<void> }> {
    const fetches: string[] = [];
    const documentServer = createServer((req, res) => {
      fetches.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: name,
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
    const documentUrl = `https://127.0.0.1:${(documentServer.address() as AddressInfo).port}/client.json`;
    return {
      documentUrl,
      fetches,
      close: async () => {
        documentServer.closeAllConnections();
        await new Promise((resolve) => documentServer.close(resolve));
      },
    };
  }

  const countClients = async (): Promise<Array<{ n: string }>> =>
    db.dataSource.query(`SELECT count(*) AS n FROM mcp_oauth_provider_records WHERE model = 'Client'`);

  it('a client known by its Client ID Metadata Document signs in the same way, without registering', async () => {
    const { documentUrl, fetches: documentFetches, close } = await serveClientMetadata('CIMD e2e client');
    try {
      const clientsBefore = await countClients();
      const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT, documentUrl);
      const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      await expect(new Client({ name: 'as-e2e-cimd', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
        UnauthorizedError,
      );
      expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(documentUrl);
      await first.finishAuth(await signIn(provider, 'carol'));
      expect(jose.decodeJwt(provider.tokens()!.access_token)).toMatchObject({
        client_id: documentUrl,
        sub: `${upstream.issuer}#carol`,
        aud: `${base}/mcp`,
      });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      const client = new Client({ name: 'as-e2e-cimd', version: '1.0.0' });
      await client.connect(transport);
      try {
        const result = await client.callTool({ name: 'whoami', arguments: {} });
        expect(JSON.parse((result.content as Array<{ text: string }>)[0].text).key).toBe(`${upstream.issuer}#carol`);
      } finally {
        await transport.terminateSession();
        await client.close();
      }
      expect(documentFetches.length).toBeGreaterThan(0);
      expect(documentFetches.every((path) => path === '/client.json')).toBe(true);
      const clientsAfter = await countClients();
      expect(clientsAfter).toEqual(clientsBefore);
    } finally {
      await close();
    }
  });

  it('SDK 2.x: a client known by its Client ID Metadata Document signs in without registering, on 2026-07-28', async () => {
    const { documentUrl, fetches, close } = await serveClientMetadata('CIMD e2e client 2.x');
    try {
      const clientsBefore = await countClients();
      const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT, documentUrl);
      const pinned = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };
      const first = new StreamableHTTPClientTransport2(new URL(`${base}/mcp`), { authProvider: provider });
      await expect(
        new Client2({ name: 'as-e2e-cimd-2', version: '2.0.0' }, pinned).connect(first),
      ).rejects.toBeInstanceOf(UnauthorizedError2);
      // The metadata names the document URL as the client id: no registration request was made.
      expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(documentUrl);
      const { url } = await signInThrough(
        provider.authorizationUrl!.href,
        CLIENT_REDIRECT,
        (origin): Record<string, string> => (origin === upstream.issuer ? { 'x-test-user': 'carol' } : {}),
      );
      expect(new URL(url).searchParams.get('iss')).toBe(issuer);
      await first.finishAuth(new URL(url).searchParams);
      expect(jose.decodeJwt(provider.tokens()!.access_token)).toMatchObject({
        client_id: documentUrl,
        sub: `${upstream.issuer}#carol`,
        aud: `${base}/mcp`,
      });
      seenTokens.push(provider.tokens()!.access_token);

      const transport = new StreamableHTTPClientTransport2(new URL(`${base}/mcp`), { authProvider: provider });
      const client = new Client2({ name: 'as-e2e-cimd-2', version: '2.0.0' }, pinned);
      await client.connect(transport);
      try {
        expect(transport.protocolVersion).toBe('2026-07-28');
        const result = await client.callTool({ name: 'whoami', arguments: {} });
        expect(JSON.parse((result.content as Array<{ text: string }>)[0].text).key).toBe(`${upstream.issuer}#carol`);
      } finally {
        await client.close();
      }
      expect(fetches.length).toBeGreaterThan(0);
      expect(fetches.every((path) => path === '/client.json')).toBe(true);
      expect(await countClients()).toEqual(clientsBefore);
    } finally {
      await close();
    }
  });

  it('refuses a metadata document whose client_id is not its own URL', async () => {
    const documentServer = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          client_id: 'https://elsewhere.example/client.json',
          redirect_uris: [CLIENT_REDIRECT],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
    const documentUrl = `https://127.0.0.1:${(documentServer.address() as AddressInfo).port}/client.json`;
    try {
      const authorize = new URL(`${issuer}/auth`);
      authorize.search = new URLSearchParams({
        client_id: documentUrl,
        response_type: 'code',
        redirect_uri: CLIENT_REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        scope: 'mcp:tools',
      }).toString();
      const reply = await fetch(authorize, { redirect: 'manual' });
      expect(reply.status).toBe(400);
      expect(await reply.json()).toMatchObject({ error: 'invalid_client_metadata' });
    } finally {
      documentServer.closeAllConnections();
      await new Promise((resolve) => documentServer.close(resolve));
    }
  });

  it("refuses a user the host's mapping grants none of the scopes asked for: access_denied, no code", async () => {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'as-e2e-zed', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === upstream.issuer ? { 'x-test-user': 'zed' } : {}),
    );
    const back = new URL(url);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('Not granted to this user: mcp:tools');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('issues no token for a resource that is not one of its mounts (invalid_target)', async () => {
    const registered = (await (
      await fetch(`${issuer}/reg`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(new MemoryOAuthClientProvider(CLIENT_REDIRECT).clientMetadata),
      })
    ).json()) as { client_id: string };
    const authorize = new URL(`${issuer}/auth`);
    authorize.search = new URLSearchParams({
      client_id: registered.client_id,
      response_type: 'code',
      redirect_uri: CLIENT_REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'mcp:tools',
      resource: 'https://elsewhere.example/mcp',
    }).toString();
    const reply = await fetch(authorize, { redirect: 'manual' });
    const back = new URL(reply.headers.get('location')!);
    expect(back.href.startsWith(CLIENT_REDIRECT)).toBe(true);
    expect(back.searchParams.get('error')).toBe('invalid_target');
  });

  it('binds a token to its mount: the other mount refuses it (401 invalid_token) and takes its own', async () => {
    const reply = await post(`${base}/admin/mcp`, initializeRequest(), { token: bobTokens.access_token });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const prm = await (await fetch(`${base}/.well-known/oauth-protected-resource/admin/mcp`)).json();
    expect(prm).toMatchObject({ resource: `${base}/admin/mcp`, authorization_servers: [issuer] });

    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/admin/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'as-e2e-admin', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${base}/admin/mcp`);
    await first.finishAuth(await signIn(provider, 'alice'));
    const token = provider.tokens()!.access_token;
    seenTokens.push(token);
    expect(jose.decodeJwt(token).aud).toBe(`${base}/admin/mcp`);
    expect((await post(`${base}/admin/mcp`, initializeRequest(), { token })).status).toBe(200);
    expect((await post(`${base}/mcp`, initializeRequest(), { token })).status).toBe(401);
  });

  it('keeps its state in the database: clients, grants, sessions, tokens and the signing keys are rows', async () => {
    const rows: Array<{ model: string }> = await db.dataSource.query(
      `SELECT DISTINCT model FROM mcp_oauth_provider_records ORDER BY model`,
    );
    expect(rows.map((row) => row.model)).toEqual(
      expect.arrayContaining([
        'Client',
        'Grant',
        'Session',
        'AuthorizationCode',
        'RefreshToken',
        'McpProviderKeys',
        'McpAccount',
      ]),
    );
    // The authorization code was used once and is marked so.
    const codes: Array<{ consumed_at: Date | null }> = await db.dataSource.query(
      `SELECT consumed_at FROM mcp_oauth_provider_records WHERE model = 'AuthorizationCode'`,
    );
    expect(codes.every((code) => code.consumed_at !== null)).toBe(true);
  });

  it('keeps the signing and cookie keys sealed: the row holds no private JWK member nor cookie key in clear', async () => {
    const [row]: Array<{ payload: string }> = await db.dataSource.query(
      `SELECT payload FROM mcp_oauth_provider_records WHERE model = 'McpProviderKeys'`,
    );
    expect(JSON.parse(row.payload)).toEqual({ sealed: expect.stringMatching(/^v1:e2e-1:/) });
    for (const member of ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', 'cookieKeys', '"kty"'])
      expect(row.payload).not.toContain(member);
    // What the row holds once opened with the same keys: none of it appears in the row as stored.
    const opened = JSON.parse(
      new McpTokenCipher(ENCRYPTION_KEYS, { option: 'encryptionKeys', missing: '' }).open(
        JSON.parse(row.payload).sealed as string,
        'McpProviderKeys\0keys',
      )!,
    ) as { keys: Array<{ jwk: Record<string, string> }>; cookieKeys: string[] };
    const published = ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys;
    expect(published.map((key) => key.kid)).toContain(opened.keys[0].jwk.kid);
    for (const secret of [opened.keys[0].jwk.d, opened.keys[0].jwk.p, opened.keys[0].jwk.q, ...opened.cookieKeys]) {
      expect(secret).toEqual(expect.any(String));
      expect(row.payload).not.toContain(secret);
    }
  });

  it('a replica with other encryption keys does not boot, saying the keys do not open and which key sealed them', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, extra: { max: 2 } }),
        McpAuthorizationServerModule.forRoot({
          publicUrl: base,
          upstream: { issuer: upstream.issuer, clientId: upstreamClient.client_id, clientSecret: 'x' },
          encryptionKeys: [{ id: 'other', key: randomBytes(32).toString('base64') }],
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await expect(app.init()).rejects.toThrow(
        'McpAuthorizationServerModule: the signing keys in mcp_oauth_provider_records do not open with the configured "encryptionKeys" (they were sealed with the key "e2e-1")',
      );
    } finally {
      await app.close();
    }
  });

  it('answers a bad token request with an OAuth error, not a page or a stack trace', async () => {
    const reply = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=nope&client_id=nobody',
    });
    expect(reply.status).toBe(401);
    expect(await reply.json()).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    // An interaction page without the browser's interaction cookie.
    const interaction = await fetch(`${issuer}/interaction/unknown-uid`);
    expect(interaction.status).toBe(400);
    expect(interaction.headers.get('content-type')).toContain('application/json');
    expect(await interaction.json()).toMatchObject({ error: 'invalid_request' });
    const callback = await fetch(`${issuer}/upstream/callback?state=forged&code=x`);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Unknown or expired sign-in (state)',
    });
  });

  it('a bare request to the mount is challenged with the metadata naming the authorization server', async () => {
    const reply = await post(`${base}/mcp`, initializeRequest(), { token: null });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
  it('rotates its signing key: the next key is published before it signs, the old one stays until its tokens expired', async () => {
    // A replica that rotates every two hours (tokens live one hour), on a database of its own, and
    // a verifier that fetches the JWKS again as soon as a token names a key it lacks.
    const rotating = await createTestDatabase();
    const port = rotationPort;
    const previous = { db, base, issuer };
    db = rotating;
    base = `http://127.0.0.1:${port}`;
    issuer = `${base}/oauth`;
    try {
      const app = await startApp(
        port,
        { keyRotationMs: 7_200_000, accessTokenTtlMs: 3_600_000 },
        JwtVerifier.configure({ jwksCooldownMs: 0 }),
      );
      const server = app.get(McpAuthorizationServer);
      const kids = async () =>
        ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
      const call = async (token: string) =>
        (
          await statelessPost(`${base}/mcp`, statelessRequest(1, 'tools/call', { name: 'whoami', arguments: {} }), {
            token,
          })
        ).status;
      const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      await expect(new Client({ name: 'as-e2e-rotation', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(
        UnauthorizedError,
      );
      await transport.finishAuth(await signIn(provider, 'erin'));
      const first = provider.tokens()!;
      const [k1] = await kids();
      expect(jose.decodeProtectedHeader(first.access_token).kid).toBe(k1);
      expect(await call(first.access_token)).toBe(200);
      const clientId = jose.decodeJwt(first.access_token).client_id as string;
      const refresh = async (refreshToken: string) => {
        const reply = await fetch(`${issuer}/token`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: refreshToken,
            client_id: clientId,
            resource: `${base}/mcp`,
          }).toString(),
        });
        expect(reply.status).toBe(200);
        return (await reply.json()) as { access_token: string; refresh_token: string };
      };

      const hour = 3_600_000;
      const t0 = Date.now();
      // An hour and a bit later (the rotation period less a token lifetime): the next key is published, not used.
      await server.rotateKeys(t0 + hour + 100_000);
      const published = await kids();
      expect(published).toHaveLength(2);
      expect(published[0]).toBe(k1);
      const k2 = published[1];
      const second = await refresh(first.refresh_token!);
      expect(jose.decodeProtectedHeader(second.access_token).kid).toBe(k1);

      // Past its start: the new key signs; the old one is still published for the tokens it signed.
      await server.rotateKeys(t0 + 2 * hour + 200_000);
      expect((await kids()).sort()).toEqual([k1, k2].sort());
      const third = await refresh(second.refresh_token);
      expect(jose.decodeProtectedHeader(third.access_token).kid).toBe(k2);
      expect(await call(third.access_token)).toBe(200);
      expect(await call(second.access_token)).toBe(200);

      // A token lifetime after the switch: the old key is gone; the new one still signs.
      await server.rotateKeys(t0 + 3 * hour + 300_000);
      const later = await kids();
      expect(later).not.toContain(k1);
      expect(later).toContain(k2);
      const fourth = await refresh(third.refresh_token);
      expect(jose.decodeProtectedHeader(fourth.access_token).kid).toBe(k2);
      expect(await call(fourth.access_token)).toBe(200);
    } finally {
      const app = apps.pop()!;
      await app.close();
      await rotating.drop();
      ({ db, base, issuer } = previous);
    }
  });

  it('writes no access or refresh token to its logs or to the audit rows', async () => {
    for (const tokens of [bobTokens]) {
      issued.add(tokens.access_token);
      if (tokens.refresh_token) issued.add(tokens.refresh_token);
    }
    for (const token of [...issued, ...seenTokens]) {
      expect(logger.lines.filter((line) => line.includes(token))).toEqual([]);
    }
    const events: Array<{ row: string }> = await db.dataSource.query(
      `SELECT row_to_json(e)::text AS row FROM mcp_events e`,
    );
    expect(events.length).toBeGreaterThan(0);
    for (const token of [...issued, ...seenTokens]) {
      expect(events.filter((event) => event.row.includes(token))).toEqual([]);
    }
  });

  it('deletes expired rows and never hands one back', async () => {
    const server = apps[0].get(McpAuthorizationServer);
    const expiredBefore: Array<{ n: string }> = await db.dataSource.query(
      `SELECT count(*) AS n FROM mcp_oauth_provider_records WHERE expires_at < now() + interval '400 days'`,
    );
    expect(Number(expiredBefore[0].n)).toBeGreaterThan(0);
    expect(await server.pruneExpired(new Date(Date.now() + 400 * 86_400_000))).toBe(Number(expiredBefore[0].n));
    const left: Array<{ model: string }> = await db.dataSource.query(
      `SELECT DISTINCT model FROM mcp_oauth_provider_records ORDER BY model`,
    );
    // Only what never expires is left: the keys, the registered clients and their registration tokens.
    expect(left.map((row) => row.model)).toEqual(['Client', 'McpProviderKeys', 'RegistrationAccessToken']);
  });
});

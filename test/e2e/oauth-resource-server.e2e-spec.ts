import { createServer, type Server } from 'node:http';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import * as jose from 'jose';
import {
  IntrospectionVerifier,
  JwtVerifier,
  MCP_ENTITIES,
  McpModule,
  McpTool,
  type McpToolContext,
} from '../../src/mcp';
import { STATELESS, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { freeLoopbackPort } from '../support/child-process';
import { pollUntil } from '../support/polling';
import { initializeRequest, post, send } from '../support/mcp-wire';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { CapturingLogger } from '../support/capturing-logger';

/** Tells the caller what the module made of its token. */
@Injectable()
class WhoTools {
  @McpTool({ description: 'The principal of the call', input: { type: 'object', properties: {} } })
  whoami(_input: unknown, ctx: McpToolContext): string {
    const { key, label, scopes, roles } = ctx.principal;
    return JSON.stringify({ key, label, scopes, roles });
  }
}

/** A tool only callers whose token carries `mcp:admin` may see and call. */
@Injectable()
class AdminTools {
  @McpTool({ description: 'Purges the cache', input: { type: 'object', properties: {} }, scopes: ['mcp:admin'] })
  purge(): string {
    return 'purged';
  }
}

const TOOLS_CLIENT = {
  client_id: 'agent-tools',
  client_secret: 'agent-tools-secret-0123456789abcdef',
  scope: 'mcp:tools mcp:admin',
} satisfies OidcClient;
const RESOURCE_SERVER = {
  client_id: 'mcp-resource-server',
  client_secret: 'resource-server-secret-0123456789ab',
  scope: '',
} satisfies OidcClient;

/** The issuer and audience the hand-made negative tokens are checked against, and its key server. */
const HAND_ISSUER = 'https://hand-made-issuer.example';

/** Lifetime of the opaque tokens of the introspected mount: short, so the cache's bound by expiry shows. */
const INTROSPECTED_TOKEN_TTL_SEC = 4;

/**
 * The module as an OAuth 2.1 resource server, against a real authorization server (oidc-provider
 * issuing JWT and opaque access tokens with resource indicators for client credentials), the
 * official SDK client's OAuth discovery, and tokens minted with jose for the cases a real server
 * would never issue.
 */
describe('OAuth resource server', () => {
  let db: TestDatabase;
  let as: TestAuthorizationServer;
  let app: INestApplication;
  let base: string;
  let keyServer: Server;
  let keyServerUrl: string;
  const logger = new CapturingLogger();
  const seenTokens: string[] = [];
  const trustedKeys: jose.JWK[] = [];
  let trustedKey: jose.CryptoKey;
  let publicJwk: jose.JWK;
  /** GETs of the hand-made key server, per path. */
  const keyFetches = new Map<string, number>();

  async function mint(
    claims: jose.JWTPayload,
    header: Partial<jose.JWTHeaderParameters> = {},
    key: jose.CryptoKey | Uint8Array = trustedKey,
  ): Promise<string> {
    const token = await new jose.SignJWT({ scope: 'mcp:tools', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'hand-key-1', ...header })
      .setIssuedAt()
      .sign(key);
    seenTokens.push(token);
    return token;
  }

  async function tokenFor(resource: string, scope: string, client = TOOLS_CLIENT): Promise<string> {
    const token = await as.token(client, resource, scope);
    seenTokens.push(token);
    return token;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const appPort = await freeLoopbackPort();
    const closedPort = await freeLoopbackPort();
    base = `http://127.0.0.1:${appPort}`;
    as = await startAuthorizationServer([TOOLS_CLIENT, { ...RESOURCE_SERVER, scope: 'mcp:tools' }], {
      [`${base}/mcp`]: { scope: 'mcp:tools mcp:admin' },
      [`${base}/admin/mcp`]: { scope: 'mcp:tools mcp:admin' },
      [`${base}/introspected/mcp`]: { scope: 'mcp:tools', format: 'opaque', ttl: INTROSPECTED_TOKEN_TTL_SEC },
      [`${base}/unreachable/mcp`]: { scope: 'mcp:tools' },
      'https://another-resource.example/mcp': { scope: 'mcp:tools mcp:admin' },
    });

    const pair = await jose.generateKeyPair('RS256', { extractable: true });
    trustedKey = pair.privateKey;
    publicJwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'hand-key-1', alg: 'RS256', use: 'sig' };
    trustedKeys.push(publicJwk);
    keyServer = createServer((req, res) => {
      keyFetches.set(req.url ?? '', (keyFetches.get(req.url ?? '') ?? 0) + 1);
      res.setHeader('Content-Type', 'application/json').end(JSON.stringify({ keys: trustedKeys }));
    });
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    keyServerUrl = `http://127.0.0.1:${(keyServer.address() as { port: number }).port}/jwks`;

    const oauth = (extra: Record<string, unknown> = {}) => ({
      publicUrl: base,
      authorizationServers: [as.issuer],
      ...extra,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({
          auth: JwtVerifier,
          providers: [WhoTools, AdminTools],
          oauth: oauth({
            requiredScopes: ['mcp:tools'],
            scopesSupported: ['mcp:tools', 'mcp:admin'],
            resourceDocumentation: 'https://docs.example.com/mcp',
            resourceName: 'Test tools',
          }),
        }),
        McpModule.forRoot({
          mount: 'admin',
          path: '/admin/mcp',
          auth: JwtVerifier.configure({ typ: 'at+jwt' }),
          providers: [WhoTools],
          oauth: oauth({ requiredScopes: ['mcp:tools', 'mcp:admin'] }),
        }),
        McpModule.forRootAsync({
          mount: 'introspected',
          path: '/introspected/mcp',
          useFactory: () => ({
            auth: IntrospectionVerifier.configure({
              clientId: RESOURCE_SERVER.client_id,
              clientSecret: RESOURCE_SERVER.client_secret,
              clockToleranceSec: 0,
            }),
            providers: [WhoTools],
            oauth: oauth(),
          }),
        }),
        McpModule.forRoot({
          mount: 'hand',
          path: '/hand/mcp',
          auth: JwtVerifier.configure({
            issuer: HAND_ISSUER,
            jwksUri: keyServerUrl,
            jwksCooldownMs: 0,
            clockToleranceSec: 5,
            rolesClaim: 'realm_access.roles',
            labelClaim: 'preferred_username',
          }),
          providers: [WhoTools],
          oauth: { publicUrl: base, authorizationServers: [HAND_ISSUER] },
        }),
        McpModule.forRoot({
          mount: 'bad-secret',
          path: '/bad-secret/mcp',
          auth: IntrospectionVerifier.configure({
            clientId: RESOURCE_SERVER.client_id,
            clientSecret: 'not-the-secret',
            audience: `${base}/introspected/mcp`,
          }),
          providers: [WhoTools],
          oauth: oauth(),
        }),
        McpModule.forRoot({
          mount: 'cooldown',
          path: '/cooldown/mcp',
          auth: JwtVerifier.configure({
            issuer: HAND_ISSUER,
            jwksUri: `${keyServerUrl}-cooldown`,
            jwksCooldownMs: 600_000,
          }),
          providers: [WhoTools],
          oauth: { publicUrl: base, authorizationServers: [HAND_ISSUER] },
        }),
        McpModule.forRoot({
          mount: 'unreachable',
          path: '/unreachable/mcp',
          auth: JwtVerifier.configure({ issuer: `http://127.0.0.1:${closedPort}`, timeoutMs: 2000 }),
          providers: [WhoTools],
          oauth: { publicUrl: base, authorizationServers: [`http://127.0.0.1:${closedPort}`] },
        }),
        McpModule.forRoot({
          mount: 'plain',
          path: '/plain/mcp',
          auth: (token: string) => (token === 'plain-token' ? 'plain' : null),
          providers: [WhoTools],
        }),
      ],
      providers: [WhoTools, AdminTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(appPort, '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await new Promise((resolve) => (keyServer ? keyServer.close(resolve) : resolve(undefined)));
    await as?.stop();
    await db?.drop();
  });

  describe('Protected Resource Metadata', () => {
    it('is served at the path-suffixed well-known URL, public, cacheable and readable cross-origin', async () => {
      const reply = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`, {
        headers: { Origin: 'https://elsewhere.example' },
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=3600');
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(await reply.json()).toEqual({
        resource: `${base}/mcp`,
        authorization_servers: [as.issuer],
        scopes_supported: ['mcp:tools', 'mcp:admin'],
        bearer_methods_supported: ['header'],
        resource_documentation: 'https://docs.example.com/mcp',
        resource_name: 'Test tools',
      });
    });

    it('answers a CORS preflight', async () => {
      const reply = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' },
      });
      expect(reply.status).toBe(204);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('access-control-allow-methods')).toContain('GET');
    });

    it('describes each mount at its own path; the root one describes the first mount', async () => {
      const admin = await (await fetch(`${base}/.well-known/oauth-protected-resource/admin/mcp`)).json();
      expect(admin).toMatchObject({ resource: `${base}/admin/mcp`, scopes_supported: ['mcp:tools', 'mcp:admin'] });
      const introspected = await (await fetch(`${base}/.well-known/oauth-protected-resource/introspected/mcp`)).json();
      expect(introspected).toEqual({
        resource: `${base}/introspected/mcp`,
        authorization_servers: [as.issuer],
        bearer_methods_supported: ['header'],
      });
      expect(await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()).toMatchObject({
        resource: `${base}/mcp`,
      });
    });

    it('does not exist for a mount without the oauth option', async () => {
      expect((await fetch(`${base}/.well-known/oauth-protected-resource/plain/mcp`)).status).toBe(404);
    });
  });

  describe('challenges', () => {
    const metadataOf = (path: string) => `resource_metadata="${base}/.well-known/oauth-protected-resource${path}"`;

    it('a request without a token gets 401 naming the metadata and the required scopes, on both revisions', async () => {
      for (const reply of [
        await post(`${base}/mcp`, initializeRequest(), { token: null }),
        await statelessPost(`${base}/mcp`, statelessRequest(1, 'tools/list'), { token: null }),
      ]) {
        expect(reply.status).toBe(401);
        expect(reply.headers.get('www-authenticate')).toBe(`Bearer ${metadataOf('/mcp')}, scope="mcp:tools"`);
      }
      const admin = await post(`${base}/admin/mcp`, initializeRequest(), { token: null });
      expect(admin.headers.get('www-authenticate')).toBe(
        `Bearer ${metadataOf('/admin/mcp')}, scope="mcp:tools mcp:admin"`,
      );
      const introspected = await post(`${base}/introspected/mcp`, initializeRequest(), { token: null });
      expect(introspected.headers.get('www-authenticate')).toBe(`Bearer ${metadataOf('/introspected/mcp')}`);
    });

    it('the metadata URL of the challenge serves the document', async () => {
      const reply = await post(`${base}/admin/mcp`, initializeRequest(), { token: null });
      const url = /resource_metadata="([^"]+)"/.exec(reply.headers.get('www-authenticate') ?? '')?.[1];
      expect(((await (await fetch(url!)).json()) as { resource: string }).resource).toBe(`${base}/admin/mcp`);
    });

    it('a rejected token gets 401 invalid_token', async () => {
      const reply = await post(`${base}/mcp`, initializeRequest(), { token: 'not-a-jwt-at-all' });
      expect(reply.status).toBe(401);
      expect(reply.text).toBe('');
      const challenge = reply.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", /);
      expect(challenge).toContain(metadataOf('/mcp'));
      expect(challenge).toContain('scope="mcp:tools"');
    });

    it('a token without the required scopes gets 403 insufficient_scope with a JSON-RPC body, on both revisions', async () => {
      const token = await tokenFor(`${base}/admin/mcp`, 'mcp:tools');
      const refusals = [
        await post(`${base}/admin/mcp`, initializeRequest(), { token }),
        await statelessPost(`${base}/admin/mcp`, statelessRequest(7, 'tools/list'), { token }),
      ];
      expect(refusals.map((reply) => reply.json?.id)).toEqual(['init-1', 7]);
      for (const reply of refusals) {
        expect(reply.status).toBe(403);
        expect(reply.headers.get('www-authenticate')).toBe(
          `Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", ${metadataOf('/admin/mcp')}`,
        );
        expect(reply.json).toMatchObject({
          jsonrpc: '2.0',
          id: expect.anything(),
          error: { code: -32000, message: expect.stringContaining('mcp:admin') },
        });
      }
      const both = await tokenFor(`${base}/admin/mcp`, 'mcp:tools mcp:admin');
      expect((await post(`${base}/admin/mcp`, initializeRequest(), { token: both })).status).toBe(200);
    });

    it('without the oauth option the challenge stays the bare Bearer', async () => {
      for (const token of [null, 'wrong']) {
        const reply = await post(`${base}/plain/mcp`, initializeRequest(), { token });
        expect(reply.status).toBe(401);
        expect(reply.headers.get('www-authenticate')).toBe('Bearer');
      }
    });
  });

  describe('tools with scopes', () => {
    const names = (reply: { json: { result: { tools: Array<{ name: string }> } } }) =>
      reply.json.result.tools.map((tool) => tool.name).sort();

    it('are hidden from a token without their scopes, and a call gets 403 insufficient_scope naming what to ask for, on both revisions', async () => {
      const token = await tokenFor(`${base}/mcp`, 'mcp:tools');
      const list = await statelessPost(`${base}/mcp`, statelessRequest(11, 'tools/list'), { token });
      expect(names(list)).toEqual(['whoami']);
      expect(list.json.result.cacheScope).toBe('private');

      const init = await post(`${base}/mcp`, initializeRequest(), { token });
      const sessionId = init.headers.get('mcp-session-id')!;
      const headers = { 'MCP-Protocol-Version': '2025-11-25' };
      expect(
        names(
          await post(`${base}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { token, sessionId, headers }),
        ),
      ).toEqual(['whoami']);
      const refusals = [
        await post(
          `${base}/mcp`,
          { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'purge', arguments: {} } },
          { token, sessionId, headers },
        ),
        await statelessPost(`${base}/mcp`, statelessRequest(12, 'tools/call', { name: 'purge', arguments: {} }), {
          token,
        }),
      ];
      for (const reply of refusals) {
        expect(reply.status).toBe(403);
        expect(reply.headers.get('www-authenticate')).toBe(
          `Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        );
        expect(reply.json).toMatchObject({
          error: { code: -32000, message: 'Insufficient scope: this request needs the scopes mcp:tools mcp:admin' },
        });
      }
      expect(refusals.map((reply) => reply.json.id)).toEqual([3, 12]);
      const whoami = await post(
        `${base}/mcp`,
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { token, sessionId, headers },
      );
      expect(whoami.status).toBe(200);
    });

    it('are listed and served once the token carries the scopes (step-up)', async () => {
      const token = await tokenFor(`${base}/mcp`, 'mcp:tools mcp:admin');
      expect(names(await statelessPost(`${base}/mcp`, statelessRequest(13, 'tools/list'), { token }))).toEqual([
        'purge',
        'whoami',
      ]);
      const call = await statelessPost(
        `${base}/mcp`,
        statelessRequest(14, 'tools/call', { name: 'purge', arguments: {} }),
        { token },
      );
      expect(call.json.result.content).toEqual([{ type: 'text', text: 'purged' }]);
    });
  });

  describe('the official SDK client', () => {
    it('starts from a bare 401, discovers the metadata and the authorization server, gets a token and calls a tool', async () => {
      const provider = new ClientCredentialsProvider({
        clientId: TOOLS_CLIENT.client_id,
        clientSecret: TOOLS_CLIENT.client_secret,
        scope: 'mcp:tools',
        expectedIssuer: as.issuer,
      });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
      await client.connect(transport);
      const token = provider.tokens()?.access_token;
      expect(token).toBeDefined();
      seenTokens.push(token!);
      expect(jose.decodeJwt(token!)).toMatchObject({ aud: `${base}/mcp`, iss: as.issuer, sub: TOOLS_CLIENT.client_id });
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual({
        key: 'agent-tools',
        label: 'agent-tools',
        scopes: ['mcp:tools'],
        roles: [],
      });
      await transport.terminateSession();
      await client.close();
    });

    it('is refused with a token issued for another resource', async () => {
      const token = await tokenFor('https://another-resource.example/mcp', 'mcp:tools');
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      const client = new Client({ name: 'oauth-e2e-wrong', version: '1.0.0' });
      await expect(client.connect(transport)).rejects.toMatchObject({ code: 401 });
      const reply = await post(`${base}/mcp`, initializeRequest(), { token });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });

    it('a token of the right resource works on the stateless revision too', async () => {
      const token = await tokenFor(`${base}/mcp`, 'mcp:tools');
      const reply = await statelessPost(
        `${base}/mcp`,
        statelessRequest(3, 'tools/call', { name: 'whoami', arguments: {} }),
        { token },
      );
      expect(reply.status).toBe(200);
      expect(reply.json.result.content[0].text).toContain('"key":"agent-tools"');
      expect(STATELESS).toBe('2026-07-28');
    });
  });

  describe('JwtVerifier with hand-made tokens', () => {
    const url = () => `${base}/hand/mcp`;
    const audience = () => `${base}/hand/mcp`;
    const status = async (token: string) => (await post(url(), initializeRequest(), { token })).status;

    it('accepts a well-formed token and maps sub, the label claim, scp and the roles path', async () => {
      const token = await mint({
        iss: HAND_ISSUER,
        aud: audience(),
        sub: 'user-42',
        preferred_username: 'alice',
        scope: undefined,
        scp: ['mcp:tools', 'extra'],
        realm_access: { roles: ['auditor'] },
        exp: Math.floor(Date.now() / 1000) + 300,
      });
      const reply = await statelessPost(url(), statelessRequest(5, 'tools/call', { name: 'whoami', arguments: {} }), {
        token,
      });
      expect(JSON.parse(reply.json.result.content[0].text)).toEqual({
        key: 'user-42',
        label: 'alice',
        scopes: ['mcp:tools', 'extra'],
        roles: ['auditor'],
      });
    });

    it.each([
      ['a wrong audience', () => ({ aud: 'https://another-resource.example/mcp' })],
      ['a wrong issuer', () => ({ iss: 'https://impostor.example' })],
      ['an expired token (beyond the clock tolerance)', () => ({ exp: Math.floor(Date.now() / 1000) - 60 })],
      ['a token not valid yet', () => ({ nbf: Math.floor(Date.now() / 1000) + 600 })],
    ])('refuses %s', async (_label, override) => {
      const token = await mint({
        iss: HAND_ISSUER,
        aud: audience(),
        sub: 'user-42',
        exp: Math.floor(Date.now() / 1000) + 300,
        ...override(),
      });
      expect(await status(token)).toBe(401);
    });

    it('accepts a token expired within the clock tolerance', async () => {
      const token = await mint({
        iss: HAND_ISSUER,
        aud: audience(),
        sub: 'user-42',
        exp: Math.floor(Date.now() / 1000) - 1,
      });
      expect(await status(token)).toBe(200);
    });

    it('refuses alg none', async () => {
      const unsecured = new jose.UnsecuredJWT({ iss: HAND_ISSUER, aud: audience(), sub: 'user-42', scope: 'mcp:tools' })
        .setExpirationTime('5m')
        .encode();
      seenTokens.push(unsecured);
      expect(await status(unsecured)).toBe(401);
    });

    it('refuses HS256 signed with the public key as the HMAC secret', async () => {
      const pem = await jose.exportSPKI((await jose.importJWK(publicJwk, 'RS256')) as jose.CryptoKey);
      for (const secret of [new TextEncoder().encode(pem), new TextEncoder().encode(JSON.stringify(publicJwk))]) {
        const token = await mint(
          { iss: HAND_ISSUER, aud: audience(), sub: 'user-42', exp: Math.floor(Date.now() / 1000) + 300 },
          { alg: 'HS256' },
          secret,
        );
        expect(await status(token)).toBe(401);
      }
    });

    it('refuses an unknown kid, and accepts it once the JWKS publishes the key (rotation)', async () => {
      const rotated = await jose.generateKeyPair('RS256', { extractable: true });
      const token = await mint(
        { iss: HAND_ISSUER, aud: audience(), sub: 'user-43', exp: Math.floor(Date.now() / 1000) + 300 },
        { kid: 'hand-key-2' },
        rotated.privateKey,
      );
      expect(await status(token)).toBe(401);
      trustedKeys.push({ ...(await jose.exportJWK(rotated.publicKey)), kid: 'hand-key-2', alg: 'RS256', use: 'sig' });
      expect(await status(token)).toBe(200);
    });

    it('refuses a token signed by a key of the same kid that is not the published one', async () => {
      const impostor = await jose.generateKeyPair('RS256');
      const token = await mint(
        { iss: HAND_ISSUER, aud: audience(), sub: 'user-42', exp: Math.floor(Date.now() / 1000) + 300 },
        {},
        impostor.privateKey,
      );
      expect(await status(token)).toBe(401);
    });

    it('fetches the JWKS again for an unknown kid at most once per cooldown', async () => {
      const url = `${base}/cooldown/mcp`;
      const exp = Math.floor(Date.now() / 1000) + 300;
      const known = await mint({ iss: HAND_ISSUER, aud: url, sub: 'user-44', exp });
      expect((await post(url, initializeRequest(), { token: known })).status).toBe(200);
      expect(keyFetches.get('/jwks-cooldown')).toBe(1);
      const fresh = await jose.generateKeyPair('RS256', { extractable: true });
      const rotated = await mint(
        { iss: HAND_ISSUER, aud: url, sub: 'user-44', exp },
        { kid: 'hand-key-3' },
        fresh.privateKey,
      );
      trustedKeys.push({ ...(await jose.exportJWK(fresh.publicKey)), kid: 'hand-key-3', alg: 'RS256', use: 'sig' });
      // The key is published now, but the verifier fetched the set moments ago: within the cooldown it does not ask again.
      expect((await post(url, initializeRequest(), { token: rotated })).status).toBe(401);
      expect((await post(url, initializeRequest(), { token: rotated })).status).toBe(401);
      expect(keyFetches.get('/jwks-cooldown')).toBe(1);
    });

    it('checks typ when configured: the admin mount wants at+jwt, which oidc-provider sets', async () => {
      const token = await tokenFor(`${base}/admin/mcp`, 'mcp:tools mcp:admin');
      expect(jose.decodeProtectedHeader(token).typ).toBe('at+jwt');
      expect((await post(`${base}/admin/mcp`, initializeRequest(), { token })).status).toBe(200);
    });
  });

  describe('IntrospectionVerifier', () => {
    it('accepts an active opaque token for this resource and maps client_id and scope', async () => {
      const token = await tokenFor(`${base}/introspected/mcp`, 'mcp:tools');
      expect(token.split('.')).toHaveLength(1);
      const reply = await statelessPost(
        `${base}/introspected/mcp`,
        statelessRequest(9, 'tools/call', { name: 'whoami', arguments: {} }),
        { token },
      );
      expect(JSON.parse(reply.json.result.content[0].text)).toEqual({
        key: 'agent-tools',
        label: 'agent-tools',
        scopes: ['mcp:tools'],
        roles: [],
      });
    });

    it('refuses a token the server does not know, and a JWT issued for another mount', async () => {
      expect(
        (await post(`${base}/introspected/mcp`, initializeRequest(), { token: 'unknown-opaque-token-value' })).status,
      ).toBe(401);
      const other = await tokenFor(`${base}/mcp`, 'mcp:tools');
      expect((await post(`${base}/introspected/mcp`, initializeRequest(), { token: other })).status).toBe(401);
    });
  });

  describe('IntrospectionVerifier with wrong client credentials', () => {
    it('answers 503 and logs that the introspection endpoint refused the resource server, not the token', async () => {
      const token = await tokenFor(`${base}/introspected/mcp`, 'mcp:tools');
      const reply = await post(`${base}/bad-secret/mcp`, initializeRequest(), { token });
      expect(reply.status).toBe(503);
      expect(
        logger.lines.some((line) =>
          /introspection endpoint .* answered HTTP 401 \(check clientId and clientSecret\)/.test(line),
        ),
      ).toBe(true);
    });
  });

  describe('IntrospectionVerifier cache', () => {
    it('reuses an active answer (a revoked token still passes) but never past the token expiry', async () => {
      const token = await tokenFor(`${base}/introspected/mcp`, 'mcp:tools');
      expect((await post(`${base}/introspected/mcp`, initializeRequest(), { token })).status).toBe(200);
      await as.revoke(TOOLS_CLIENT, token);
      expect((await post(`${base}/introspected/mcp`, initializeRequest(), { token })).status).toBe(200);
      // The cache would keep the answer for its 60 s TTL; the token's exp, seconds away, ends it first.
      await pollUntil('the cached answer to end with the token', async () =>
        (await post(`${base}/introspected/mcp`, initializeRequest(), { token })).status === 401 ? true : undefined,
      );
    });
  });

  describe('an authorization server that cannot be reached', () => {
    it('answers 503 with Retry-After (the token may be fine), naming the server and never the token', async () => {
      const token = await tokenFor(`${base}/unreachable/mcp`, 'mcp:tools');
      const reply = await post(`${base}/unreachable/mcp`, initializeRequest(), { token });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32603 } });
      expect(reply.text).not.toContain(token);
      expect(logger.lines.some((line) => line.includes('could not be reached'))).toBe(true);
    });
  });

  it('no token reached a log line or an audit row', async () => {
    // Its own traffic, accepted and refused, on every verifier, so the check does not rest on the tests before it.
    const sub = `leak-user-${Date.now()}`;
    const exp = Math.floor(Date.now() / 1000) + 300;
    const bogus = `not-a-jwt-${Date.now()}`;
    seenTokens.push(bogus);
    const own = [
      await tokenFor(`${base}/mcp`, 'mcp:tools mcp:admin'),
      await tokenFor(`${base}/admin/mcp`, 'mcp:tools'),
      await tokenFor(`${base}/introspected/mcp`, 'mcp:tools'),
      await tokenFor(`${base}/introspected/mcp`, 'mcp:tools'),
      await tokenFor(`${base}/unreachable/mcp`, 'mcp:tools'),
      await mint({ iss: HAND_ISSUER, aud: `${base}/hand/mcp`, sub, exp }),
      await mint({ iss: HAND_ISSUER, aud: `${base}/hand/mcp`, sub, exp: Math.floor(Date.now() / 1000) - 60 }),
      await mint(
        { iss: HAND_ISSUER, aud: `${base}/hand/mcp`, sub, exp },
        {},
        (await jose.generateKeyPair('RS256')).privateKey,
      ),
      bogus,
    ];
    expect(new Set(own).size).toBe(9);
    const [full, narrow, opaque, refusedOpaque, unreachable, hand, expired, impostor] = own;
    const whoami = (id: number) => statelessRequest(id, 'tools/call', { name: 'whoami', arguments: {} });
    expect((await statelessPost(`${base}/mcp`, whoami(31), { token: full })).status).toBe(200);
    expect((await post(`${base}/mcp`, initializeRequest(), { token: full })).status).toBe(200);
    expect((await post(`${base}/admin/mcp`, initializeRequest(), { token: narrow })).status).toBe(403);
    expect((await statelessPost(`${base}/introspected/mcp`, whoami(32), { token: opaque })).status).toBe(200);
    expect((await post(`${base}/bad-secret/mcp`, initializeRequest(), { token: refusedOpaque })).status).toBe(503);
    expect((await post(`${base}/unreachable/mcp`, initializeRequest(), { token: unreachable })).status).toBe(503);
    expect((await statelessPost(`${base}/hand/mcp`, whoami(33), { token: hand })).status).toBe(200);
    expect((await post(`${base}/hand/mcp`, initializeRequest(), { token: expired })).status).toBe(401);
    expect((await post(`${base}/hand/mcp`, initializeRequest(), { token: impostor })).status).toBe(401);
    expect((await post(`${base}/mcp`, initializeRequest(), { token: bogus })).status).toBe(401);

    const leaking = logger.lines.filter((line) => seenTokens.some((token) => line.includes(token)));
    expect(leaking).toEqual([]);
    const rows: Array<{ row: string }> = await db.dataSource.query(
      `SELECT e::text AS row FROM mcp_events e UNION ALL SELECT s::text FROM mcp_inbound_sessions s`,
    );
    // The one accepted call of the hand-made principal wrote one row: the rows searched hold this test's traffic.
    const ownRows = await db.dataSource.query(`SELECT method FROM mcp_events WHERE principal_key = $1`, [sub]);
    expect(ownRows.map((row: { method: string }) => row.method)).toEqual(['tools/call']);
    expect(rows.filter(({ row }) => seenTokens.some((token) => row.includes(token)))).toEqual([]);
    const reply = await send(`${base}/mcp`, 'DELETE', { token: 'x' });
    expect(reply.status).toBe(401);
  });
});

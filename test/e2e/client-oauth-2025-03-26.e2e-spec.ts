import { createHash, randomBytes } from 'node:crypto';
import { Body, Controller, Get, Headers, HttpCode, Post, Query, Res, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Response } from 'express';
import {
  authorizationCode,
  clientCredentials,
  MCP_ENTITIES,
  McpClientModule,
  McpClientService,
  McpModule,
  McpOAuthService,
} from '../../src/mcp';
import { McpUntrustedAuthorizationServerError } from '../../src/mcp/errors';
import { CapturingLogger } from '../support/capturing-logger';
import { freeLoopbackPort } from '../support/child-process';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { WhoAmITools } from '../fixtures/client/whoami-tools';

jest.setTimeout(120_000);

const KEYS = [{ id: 'k1', key: randomBytes(32).toString('base64') }];
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** What one 2025-03-26 server's built-in authorization server saw and issued. */
interface LegacyState {
  /** Serves RFC 8414 metadata at the origin (endpoints under /oauth), or none (the default endpoints). */
  metadata: boolean;
  /** Every request to an authorization server endpoint, as `METHOD path grant?`. */
  hits: string[];
  clients: Map<string, string>;
  codes: Map<string, { user: string; challenge: string; clientId: string }>;
  /** Access tokens and who they stand for. */
  tokens: Map<string, { key: string }>;
  /** The confidential client of `clientCredentials`. */
  machine: { id: string; secret: string };
}

/**
 * An MCP server of the 2025-03-26 authorization specification: no Protected Resource Metadata,
 * the authorization server on its own origin (PKCE, dynamic registration, client credentials).
 */
function legacyServerModule(state: LegacyState, origin: string, databaseUrl: string) {
  @Controller()
  class LegacyAuthorizationServer {
    @Get('.well-known/oauth-authorization-server')
    wellKnown(@Headers('mcp-protocol-version') version: string | undefined, @Res() res: Response): void {
      state.hits.push(`GET metadata ${version ?? '-'}`);
      if (!state.metadata) return void res.status(404).json({});
      res.json({
        issuer: origin,
        authorization_endpoint: `${origin}/oauth/authorize`,
        token_endpoint: `${origin}/oauth/token`,
        registration_endpoint: `${origin}/oauth/register`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
      });
    }

    @Post(['register', 'oauth/register'])
    @HttpCode(201)
    register(@Body() body: { redirect_uris?: string[] }, @Query() _q: unknown): object {
      state.hits.push(`POST register`);
      const id = `client-${state.clients.size + 1}`;
      const secret = randomBytes(16).toString('hex');
      state.clients.set(id, secret);
      return { client_id: id, client_secret: secret, redirect_uris: body.redirect_uris ?? [] };
    }

    @Get(['authorize', 'oauth/authorize'])
    authorize(
      @Query() query: Record<string, string>,
      @Headers('x-test-user') user: string,
      @Res() res: Response,
    ): void {
      state.hits.push(`GET authorize`);
      if (query.code_challenge_method !== 'S256' || !state.clients.has(query.client_id))
        return void res.status(400).json({ error: 'invalid_request' });
      const code = randomBytes(16).toString('hex');
      state.codes.set(code, { user, challenge: query.code_challenge, clientId: query.client_id });
      const back = new URL(query.redirect_uri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', query.state);
      res.redirect(302, back.href);
    }

    @Post(['token', 'oauth/token'])
    @HttpCode(200)
    token(@Body() form: Record<string, string>, @Headers('authorization') authorization = ''): object {
      state.hits.push(`POST token ${form.grant_type}`);
      const [id, secret] = Buffer.from(authorization.replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':');
      const issue = (key: string) => {
        const token = randomBytes(16).toString('hex');
        state.tokens.set(token, { key });
        return { access_token: token, token_type: 'Bearer', expires_in: 600 };
      };
      if (form.grant_type === 'client_credentials' && id === state.machine.id && secret === state.machine.secret)
        return issue(id);
      const code = state.codes.get(form.code);
      if (
        form.grant_type === 'authorization_code' &&
        code &&
        state.clients.get(id) === secret &&
        code.clientId === id &&
        s256(form.code_verifier) === code.challenge
      ) {
        state.codes.delete(form.code);
        return issue(code.user);
      }
      return { error: 'invalid_grant' };
    }
  }

  return Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl, entities: MCP_ENTITIES, extra: { max: 3 } }),
      McpModule.forRoot({ auth: (token: string) => state.tokens.get(token) ?? null, providers: [WhoAmITools] }),
    ],
    controllers: [LegacyAuthorizationServer],
    providers: [WhoAmITools],
  }).compile();
}

/**
 * The client's discovery of a 2025-03-26 server (no Protected Resource Metadata): the RFC 8414
 * metadata at the server's origin, else the default endpoints there, only when the configuration
 * trusts that origin; the whole authorization code flow (dynamic registration, PKCE) and client
 * credentials through it.
 */
describe('Outbound OAuth with a 2025-03-26 server (no Protected Resource Metadata)', () => {
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];
  let db: TestDatabase;
  let client: McpClientService;
  let oauth: McpOAuthService;
  const servers: Record<'bare' | 'described', { origin: string; state: LegacyState }> = {} as never;
  let callbackBase: string;

  /** The user's browser: the authorization server approves at once, the callback completes. */
  async function signIn(authorizationUrl: string, user: string): Promise<{ status: number; text: string }> {
    const approved = await fetch(authorizationUrl, { redirect: 'manual', headers: { 'x-test-user': user } });
    const location = approved.headers.get('location');
    await approved.body?.cancel();
    if (approved.status !== 302 || !location) throw new Error(`authorize answered ${approved.status}`);
    const done = await fetch(location);
    return { status: done.status, text: await done.text() };
  }

  const whoami = (server: string, scopeKey?: string) =>
    client.callTool(server, 'whoami', {}, scopeKey ? { scopeKey } : {}).then((result) => {
      const content = (result as { content: Array<{ text: string }> }).content;
      return JSON.parse(content[0].text) as unknown;
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    // One map for both servers: the bearer strategy of an app is registered with Passport, which is process-wide.
    const tokens = new Map<string, { key: string }>();
    for (const [name, metadata] of [
      ['bare', false],
      ['described', true],
    ] as const) {
      const port = await freeLoopbackPort();
      const origin = `http://127.0.0.1:${port}`;
      const state: LegacyState = {
        metadata,
        hits: [],
        clients: new Map(),
        codes: new Map(),
        tokens,
        machine: { id: `machine-${name}`, secret: randomBytes(16).toString('hex') },
      };
      const app = (await legacyServerModule(state, origin, db.url)).createNestApplication({ logger });
      await app.listen(port, '127.0.0.1');
      apps.push(app);
      servers[name] = { origin, state };
    }
    const callbackPort = await freeLoopbackPort();
    callbackBase = `http://127.0.0.1:${callbackPort}`;
    const { bare, described } = servers;
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, extra: { max: 3 } }),
        McpClientModule.forRoot({
          servers: {
            bare: {
              url: `${bare.origin}/mcp`,
              scope: 'principal',
              auth: authorizationCode({ dynamicRegistration: true, authorizationServer: bare.origin }),
            },
            described: {
              url: `${described.origin}/mcp`,
              scope: 'principal',
              auth: authorizationCode({ dynamicRegistration: true, trustedAuthorizationServers: [described.origin] }),
            },
            untrusted: {
              url: `${bare.origin}/mcp`,
              scope: 'principal',
              auth: authorizationCode({ dynamicRegistration: true, authorizationServer: 'https://login.example.com' }),
            },
            machine: {
              url: `${bare.origin}/mcp`,
              auth: clientCredentials({
                clientId: bare.state.machine.id,
                clientSecret: bare.state.machine.secret,
                authorizationServer: bare.origin,
              }),
            },
          },
          oauth: { redirectUri: `${callbackBase}/mcp-oauth/callback`, encryptionKeys: KEYS },
          oauthCallbackPath: '/mcp-oauth/callback',
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.listen(callbackPort, '127.0.0.1');
    apps.push(app);
    client = app.get(McpClientService);
    oauth = app.get(McpOAuthService);
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await db?.drop();
  });

  it('without any metadata, registers, sends the user and gets the token at /register, /authorize and /token of the server origin', async () => {
    const { origin, state } = servers.bare;
    const url = await oauth.authorizationUrl('bare', 'alice');
    expect(url.startsWith(`${origin}/authorize?`)).toBe(true);
    expect(Object.fromEntries(new URL(url).searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'client-1',
      code_challenge_method: 'S256',
    });
    expect(await signIn(url, 'alice')).toMatchObject({
      status: 200,
      text: expect.stringContaining('Authorization complete'),
    });
    expect(await whoami('bare', 'alice')).toMatchObject({ key: 'alice' });
    expect(state.hits).toEqual(
      expect.arrayContaining([
        'GET metadata 2025-03-26',
        'POST register',
        'GET authorize',
        'POST token authorization_code',
      ]),
    );
  });

  it('with RFC 8414 metadata at the server origin, uses the endpoints it announces', async () => {
    const { origin, state } = servers.described;
    const url = await oauth.authorizationUrl('described', 'bob');
    expect(url.startsWith(`${origin}/oauth/authorize?`)).toBe(true);
    expect(await signIn(url, 'bob')).toMatchObject({ status: 200 });
    expect(await whoami('described', 'bob')).toMatchObject({ key: 'bob' });
    expect(state.hits).toEqual([
      'GET metadata 2025-03-26',
      'POST register',
      'GET authorize',
      'POST token authorization_code',
    ]);
  });

  it('gets a client credentials token from the default /token of a trusted server origin', async () => {
    const before = servers.bare.state.hits.length;
    expect(await whoami('machine')).toMatchObject({ key: servers.bare.state.machine.id });
    expect(servers.bare.state.hits.slice(before)).toContain('POST token client_credentials');
  });

  it('sends nothing to a server origin the configuration does not trust, and says what to add', async () => {
    const before = servers.bare.state.hits.length;
    const failure = oauth.authorizationUrl('untrusted', 'carol');
    await expect(failure).rejects.toBeInstanceOf(McpUntrustedAuthorizationServerError);
    await expect(failure).rejects.toThrow(
      `add ${servers.bare.origin} to authorizationServer or trustedAuthorizationServers`,
    );
    expect(servers.bare.state.hits.slice(before)).toEqual([]);
  });
});

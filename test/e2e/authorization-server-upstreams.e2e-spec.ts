import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
  type McpToolContext,
} from '../../src/mcp';
import { MemoryOAuthClientProvider, signInThrough } from '../support/browserless-user-agent';
import { freeLoopbackPort } from '../support/child-process';
import { createHttpApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(120_000);

@Injectable()
class WhoTools {
  @McpTool({ description: 'The principal of the call', input: { type: 'object', properties: {} } })
  whoami(_input: unknown, ctx: McpToolContext): string {
    const { key, label, roles } = ctx.principal;
    return JSON.stringify({ key, label, roles });
  }
}

const CLIENT_REDIRECT = 'http://127.0.0.1:1/callback';
const GITHUB_CLIENT = { id: 'gh-client', secret: 'gh-secret-0123456789abcdef' };

/** GitHub's users of the stand-in, by login. */
const USERS: Record<string, { id: number; login: string; name: string | null }> = {
  octo: { id: 42, login: 'octo', name: 'Octo Cat' },
  mallory: { id: 66, login: 'mallory', name: null },
};

/**
 * A loopback stand-in for GitHub's OAuth app endpoints (there is no network here): the authorize
 * page signs in the login of `x-test-user` (or answers `access_denied` for `nobody`), the token
 * endpoint checks the client secret, the redirect URI and the PKCE verifier, and `/user` answers
 * the user of the token. It plays GitHub's wire format, not its behaviour beyond that.
 */
class GitHubStandIn {
  private server?: Server;
  private readonly codes = new Map<string, { login: string; challenge: string; redirectUri: string }>();
  private readonly tokens = new Map<string, string>();
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        ({ status, headers, body }) => res.writeHead(status, headers).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(
    req: IncomingMessage,
  ): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const url = new URL(req.url ?? '/', this.base);
    const json = (status: number, body: unknown) => ({
      status,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (url.pathname === '/login/oauth/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('state', url.searchParams.get('state')!);
      const login = String(req.headers['x-test-user']);
      if (login === 'nobody') back.searchParams.set('error', 'access_denied');
      else {
        const code = randomBytes(16).toString('hex');
        this.codes.set(code, {
          login,
          challenge: url.searchParams.get('code_challenge')!,
          redirectUri: url.searchParams.get('redirect_uri')!,
        });
        back.searchParams.set('code', code);
      }
      return { status: 302, headers: { Location: back.href }, body: '' };
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const form = new URLSearchParams(text);
      const grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifier = createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url');
      // GitHub answers a refused code with 200 and an error field.
      if (
        !grant ||
        form.get('client_id') !== GITHUB_CLIENT.id ||
        form.get('client_secret') !== GITHUB_CLIENT.secret ||
        form.get('redirect_uri') !== grant.redirectUri ||
        verifier !== grant.challenge
      )
        return json(200, { error: 'bad_verification_code' });
      const token = randomBytes(16).toString('hex');
      this.tokens.set(token, grant.login);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user' });
    }
    if (url.pathname === '/user') {
      const login = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (login === 'broken') return json(502, { message: 'Server Error' });
      return login && USERS[login] ? json(200, USERS[login]) : json(401, { message: 'Bad credentials' });
    }
    return json(404, { message: 'Not Found' });
  }
}

/**
 * The authorization server with GitHub as the upstream (a loopback stand-in for github.com and
 * api.github.com), on the Fastify adapter, and how refusals reach the MCP client: the user denies
 * at GitHub, the host's mapping refuses the user, GitHub refuses the code.
 */
describe('McpAuthorizationServerModule with GitHub upstream, on Fastify', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const github = new GitHubStandIn();
  let base: string;
  let issuer: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    await github.start();
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    issuer = `${base}/oauth`;
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, extra: { max: 4 } }),
        McpAuthorizationServerModule.forRootAsync({
          useFactory: () => ({
            publicUrl: base,
            upstream: {
              kind: 'github',
              clientId: GITHUB_CLIENT.id,
              clientSecret: GITHUB_CLIENT.secret,
              webUrl: github.base,
              apiUrl: github.base,
            },
            encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64') }],
            principal: (claims, upstreamIssuer) => {
              if (claims.login === 'mallory') throw new Error('mallory is not on the team');
              return {
                key: `${upstreamIssuer}#${String(claims.sub)}`,
                label: String(claims.login),
                roles: ['team'],
              };
            },
          }),
        }),
        McpModule.forRoot({ auth: JwtVerifier, oauth: { publicUrl: base, requiredScopes: ['mcp:tools'] } }),
      ],
      providers: [WhoTools],
    }).compile();
    app = createHttpApp(moduleRef, 'fastify', { logger: ['error'] });
    await app.listen(port, '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await github.stop();
    await db?.drop();
  });

  /** The SDK client up to its authorization URL, then the user agent through GitHub as `login`. */
  async function authorizeAs(
    login: string,
  ): Promise<{ provider: MemoryOAuthClientProvider; back: URL; first: StreamableHTTPClientTransport }> {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'as-github', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === github.base ? { 'x-test-user': login } : {}),
    );
    return { provider, back: new URL(url), first };
  }

  it('signs a GitHub user in: the principal comes from /user, and the SDK client calls a tool', async () => {
    const { provider, back, first } = await authorizeAs('octo');
    expect(back.searchParams.get('error')).toBeNull();
    await first.finishAuth(back.searchParams.get('code')!);
    expect(jose.decodeJwt(provider.tokens()!.access_token)).toMatchObject({
      iss: issuer,
      aud: `${base}/mcp`,
      sub: `${github.base}#42`,
      name: 'octo',
      roles: ['team'],
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'as-github', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0].text)).toEqual({
        key: `${github.base}#42`,
        label: 'octo',
        roles: ['team'],
      });
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('sends the client back with access_denied when the user denies at GitHub', async () => {
    const { back } = await authorizeAs('nobody');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it("sends the client back with access_denied when the host's mapping refuses the user, saying nothing of why", async () => {
    const { back } = await authorizeAs('mallory');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('The user is not allowed here');
  });

  it('answers 503 temporarily_unavailable, not a stack trace, when GitHub fails while the user comes back', async () => {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'as-github', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await expect(
      signInThrough(provider.authorizationUrl!.href, CLIENT_REDIRECT, (origin): Record<string, string> =>
        origin === github.base ? { 'x-test-user': 'broken' } : {},
      ),
    ).rejects.toThrow(
      /upstream\/callback\?.* answered 503 without sending the user on: \{"error":"temporarily_unavailable","error_description":"The identity provider cannot be reached"\}/,
    );
  });

  it('serves the RFC 8414 metadata and OAuth errors on Fastify too', async () => {
    const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server/oauth`)).json();
    expect(metadata).toMatchObject({ issuer, token_endpoint: `${issuer}/token` });
    const callback = await fetch(`${issuer}/upstream/callback?code=x`);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Unknown or expired sign-in (state)',
    });
    // A path beside the issuer's is the app's, not the authorization server's.
    expect((await fetch(`${base}/oauthx`)).status).toBe(404);
  });
});

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Readable } from 'node:stream';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import Redis from 'ioredis';
import * as jose from 'jose';
import {
  clientCredentials,
  JwtVerifier,
  MCP_ENTITIES,
  McpClientModule,
  McpClientService,
  McpModule,
  McpTool,
  staticToken,
  type McpAuthChallenge,
  type McpAuthTarget,
  type McpClientAuth,
  type McpClientOptions,
  type McpTokenStore,
} from '../../src/mcp';
import { McpTransportError, McpUntrustedAuthorizationServerError } from '../../src/mcp/errors';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import { freeLoopbackPort } from '../support/child-process';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import { CapturingLogger } from '../support/capturing-logger';

jest.setTimeout(120_000);

/** Counts its calls, so a test sees how often a tool really ran. */
@Injectable()
class CountingTools {
  bumps = 0;
  purges = 0;

  @McpTool({ description: 'Counts a call', input: { type: 'object', properties: {} } })
  bump(): string {
    return String(++this.bumps);
  }

  @McpTool({ description: 'Needs mcp:admin', input: { type: 'object', properties: {} }, scopes: ['mcp:admin'] })
  purge(): string {
    this.purges++;
    return 'purged';
  }
}

/** An auth provider of the app, resolved through DI: client credentials behind a class of its own. */
@Injectable()
class DiAgentAuth implements McpClientAuth {
  static secret = '';
  static issuer = '';
  readonly targets: string[] = [];
  private inner?: McpClientAuth;
  private get auth(): McpClientAuth {
    this.inner ??= clientCredentials({
      clientId: DI_AGENT.client_id,
      clientSecret: DiAgentAuth.secret,
      authorizationServer: DiAgentAuth.issuer,
      scope: 'mcp:tools',
    });
    return this.inner;
  }
  getToken(target: McpAuthTarget, store: McpTokenStore): Promise<string> {
    this.targets.push(target.url.href);
    return this.auth.getToken(target, store);
  }
  invalidate(target: McpAuthTarget, store: McpTokenStore, refused?: string): Promise<void> {
    return this.auth.invalidate(target, store, refused);
  }
}

const secret = () => randomBytes(24).toString('hex');
const AGENT: OidcClient = { client_id: 'agent', client_secret: secret(), scope: 'mcp:tools' };
const SHORT_AGENT: OidcClient = { client_id: 'short-agent', client_secret: secret(), scope: 'mcp:tools' };
const SCOPE_AGENT: OidcClient = { client_id: 'scope-agent', client_secret: secret(), scope: 'mcp:tools mcp:admin' };
const PAIR_AGENT: OidcClient = { client_id: 'pair-agent', client_secret: secret(), scope: 'mcp:tools' };
const HIDDEN_AGENT: OidcClient = { client_id: 'hidden-agent', client_secret: secret(), scope: 'mcp:tools' };
const DI_AGENT: OidcClient = { client_id: 'di-agent', client_secret: secret(), scope: 'mcp:tools' };
/** Used only by the leak test, so that it makes its own tokens whatever ran before it. */
const LEAK_AGENT: OidcClient = { client_id: 'leak-agent', client_secret: secret(), scope: 'mcp:tools' };
/** Asks for a token straight from the test, to know that every earlier token line was read. */
const MARKER: OidcClient = { client_id: 'marker', client_secret: secret(), scope: 'mcp:tools' };

/** Lifetime of the tokens of the `short` mount, in seconds. */
const SHORT_TTL_SEC = 2;

/**
 * McpClientService as an OAuth client (client credentials) of this module's own resource server
 * (JwtVerifier + oauth), with a real authorization server (oidc-provider) issuing the tokens.
 */
describe('Outbound OAuth (clientCredentials, staticToken)', () => {
  const prefix = `mcp-oauth-e2e-${randomBytes(4).toString('hex')}`;
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];
  let db: TestDatabase;
  let as: TestAuthorizationServer;
  let base: string;
  let tools: CountingTools;
  let redis: Redis;
  let first: McpClientService;
  let second: McpClientService;
  let inline: McpClientService;
  let injected: DiAgentAuth;
  /** A proxy in front of the `hidden` mount with no well-known metadata: only its 401 challenge names it. */
  let proxy: Server;
  let proxyBase: string;
  let proxyMetadataReads = 0;
  let keyAgent: OidcClient;
  let keyAgentJwk: jose.JWK;
  const seenTokens = new Set<string>();

  const tokenKeys = () => redis.keys(`${prefix}:mcp-oauth:token:*`);

  /** Remembers every token in Redis, for the leak checks. */
  async function collectTokens(): Promise<void> {
    for (const key of await tokenKeys()) {
      const token = await redis.get(key);
      if (token) seenTokens.add(token);
    }
  }

  /** The Redis keys holding a token issued to `client` (the access tokens are JWTs naming their client). */
  async function tokenKeysOf(client: OidcClient): Promise<string[]> {
    const keys: string[] = [];
    for (const key of await tokenKeys()) {
      const token = await redis.get(key);
      if (token && !token.startsWith('forged-') && jose.decodeJwt(token).client_id === client.client_id) keys.push(key);
    }
    return keys;
  }

  /** Tokens issued to `client`, once the authorization server's output up to now was read. */
  async function issued(client: OidcClient): Promise<number> {
    const markers = as.tokensIssued(MARKER.client_id);
    await as.token(MARKER, `${base}/mcp`, 'mcp:tools');
    await pollUntil('the marker token line', () => (as.tokensIssued(MARKER.client_id) > markers ? true : undefined));
    return as.tokensIssued(client.client_id);
  }

  function servers(): McpClientOptions['servers'] {
    // A fresh provider per app: sharing between the apps must come from Redis, not from one object.
    return {
      main: {
        url: `${base}/mcp`,
        auth: clientCredentials({
          clientId: AGENT.client_id,
          clientSecret: AGENT.client_secret,
          authorizationServer: as.issuer,
          scope: 'mcp:tools',
        }),
      },
      short: {
        url: `${base}/short/mcp`,
        auth: clientCredentials({
          clientId: SHORT_AGENT.client_id,
          clientSecret: SHORT_AGENT.client_secret,
          authorizationServer: as.issuer,
          scope: 'mcp:tools',
        }),
      },
      admin: {
        url: `${base}/mcp`,
        auth: clientCredentials({
          clientId: SCOPE_AGENT.client_id,
          clientSecret: SCOPE_AGENT.client_secret,
          authorizationServer: as.issuer,
          scope: 'mcp:tools',
        }),
      },
      pair: {
        url: `${base}/mcp`,
        auth: clientCredentials({
          clientId: PAIR_AGENT.client_id,
          clientSecret: PAIR_AGENT.client_secret,
          authorizationServer: as.issuer,
          scope: 'mcp:tools',
        }),
      },
      leak: {
        url: `${base}/mcp`,
        auth: clientCredentials({
          clientId: LEAK_AGENT.client_id,
          clientSecret: LEAK_AGENT.client_secret,
          authorizationServer: as.issuer,
          scope: 'mcp:tools',
        }),
      },
    };
  }

  async function clientApp(
    options: McpClientOptions,
    providers: Array<typeof DiAgentAuth> = [],
  ): Promise<McpClientService> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot(options),
      ],
      providers,
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    apps.push(app);
    return app.get(McpClientService);
  }

  beforeAll(async () => {
    DiAgentAuth.secret = DI_AGENT.client_secret!;
    db = await createTestDatabase();
    redis = new Redis(TEST_REDIS_URL);
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    const pair = await jose.generateKeyPair('ES256', { extractable: true });
    keyAgentJwk = { ...(await jose.exportJWK(pair.privateKey)), kid: 'agent-key-1' };
    const publicJwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'agent-key-1', alg: 'ES256', use: 'sig' };
    keyAgent = {
      client_id: 'key-agent',
      scope: 'mcp:tools',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
    };
    const proxyPort = await freeLoopbackPort();
    proxyBase = `http://127.0.0.1:${proxyPort}`;
    as = await startAuthorizationServer(
      [AGENT, SHORT_AGENT, SCOPE_AGENT, PAIR_AGENT, DI_AGENT, HIDDEN_AGENT, LEAK_AGENT, MARKER, keyAgent],
      {
        [`${proxyBase}/mcp`]: { scope: 'mcp:tools' },
        [`${base}/mcp`]: { scope: 'mcp:tools mcp:admin' },
        [`${base}/short/mcp`]: { scope: 'mcp:tools', ttl: SHORT_TTL_SEC },
      },
    );
    DiAgentAuth.issuer = as.issuer;

    const oauth = { publicUrl: base, authorizationServers: [as.issuer], requiredScopes: ['mcp:tools'] };
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ auth: JwtVerifier, providers: [CountingTools], oauth }),
        McpModule.forRoot({
          mount: 'short',
          path: '/short/mcp',
          auth: JwtVerifier.configure({ clockToleranceSec: 0 }),
          providers: [CountingTools],
          oauth,
        }),
        McpModule.forRoot({
          mount: 'hidden',
          path: '/hidden/mcp',
          auth: JwtVerifier.configure({ issuer: as.issuer, audience: `${proxyBase}/mcp` }),
          providers: [CountingTools],
        }),
        McpModule.forRoot({
          mount: 'plain',
          path: '/plain/mcp',
          auth: (token: string) => (token === 'plain-token' ? 'plain' : null),
          providers: [CountingTools],
        }),
      ],
      providers: [CountingTools],
    }).compile();
    const server = moduleRef.createNestApplication({ logger });
    await server.listen(port, '127.0.0.1');
    apps.push(server);
    tools = server.get(CountingTools);
    proxy = createServer((req, res) => {
      void (async () => {
        if (req.url?.startsWith('/.well-known/')) return void res.writeHead(404).end();
        if (req.url === '/meta/hidden') {
          proxyMetadataReads++;
          return void res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(JSON.stringify({ resource: `${proxyBase}/mcp`, authorization_servers: [as.issuer] }));
        }
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers))
          if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
            headers.set(name, value);
        const upstream = await fetch(`${base}/hidden/mcp`, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const out: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(name))
            out[name] = value;
        });
        if (upstream.status === 401) out['www-authenticate'] = `Bearer resource_metadata="${proxyBase}/meta/hidden"`;
        res.writeHead(upstream.status, out);
        if (upstream.body) Readable.fromWeb(upstream.body).pipe(res);
        else res.end();
      })().catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));

    // Two apps, each with its own Bull queue and worker on one Redis: every job of one runs in its worker.
    const queue = (name: string) => ({
      prefix,
      name: `${name}-${randomBytes(3).toString('hex')}`,
      attempts: 1,
    });
    first = await clientApp({ servers: servers(), redis: TEST_REDIS_URL, queue: queue('first') });
    second = await clientApp({ servers: servers(), redis: TEST_REDIS_URL, queue: queue('second') });
    inline = await clientApp(
      {
        servers: {
          keyed: {
            url: `${base}/mcp`,
            auth: clientCredentials({
              clientId: keyAgent.client_id,
              privateKeyJwt: { key: keyAgentJwk, alg: 'ES256', kid: 'agent-key-1' },
              authorizationServer: as.issuer,
              scope: 'mcp:tools',
            }),
          },
          plain: { url: `${base}/plain/mcp`, auth: staticToken('plain-token') },
          wrong: { url: `${base}/plain/mcp`, auth: staticToken('wrong-static-token') },
          injected: { url: `${base}/mcp`, auth: DiAgentAuth },
          hidden: {
            url: `${proxyBase}/mcp`,
            auth: clientCredentials({
              clientId: HIDDEN_AGENT.client_id,
              clientSecret: HIDDEN_AGENT.client_secret,
              authorizationServer: as.issuer,
              scope: 'mcp:tools',
            }),
          },
          pinnedElsewhere: {
            url: `${base}/mcp`,
            auth: clientCredentials({
              clientId: AGENT.client_id,
              clientSecret: AGENT.client_secret,
              authorizationServer: 'https://elsewhere.example',
            }),
          },
          badSecret: {
            url: `${base}/mcp`,
            auth: clientCredentials({
              clientId: AGENT.client_id,
              clientSecret: 'not-the-agent-secret',
              authorizationServer: as.issuer,
              scope: 'mcp:tools',
            }),
          },
        },
      },
      [DiAgentAuth],
    );
    injected = apps[apps.length - 1].get(DiAgentAuth);
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    proxy?.closeAllConnections();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await deleteRedisKeys(`${prefix}:*`);
    redis?.disconnect();
    await as?.stop();
    await db?.drop();
  });

  afterEach(collectTokens);

  it('fetches one token for many concurrent calls of one worker', async () => {
    expect(first.mode).toBe('bull');
    // No token of AGENT cached, whatever ran before: the calls must fetch one.
    for (const key of await tokenKeysOf(AGENT)) await redis.del(key);
    const issuedBefore = await issued(AGENT);
    const before = tools.bumps;
    const results = await Promise.all(Array.from({ length: 12 }, () => first.callTool('main', 'bump', {})));
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(tools.bumps).toBe(before + 12);
    expect(await issued(AGENT)).toBe(issuedBefore + 1);
  });

  it('shares that token through Redis with the worker of another app', async () => {
    for (const key of await tokenKeysOf(AGENT)) await redis.del(key);
    const issuedBefore = await issued(AGENT);
    expect((await first.callTool('main', 'bump', {})).isError).toBeFalsy();
    const result = await second.callTool('main', 'bump', {});
    expect(result.isError).toBeFalsy();
    expect(await issued(AGENT)).toBe(issuedBefore + 1);
    expect(await tokenKeysOf(AGENT)).toHaveLength(1);
  });

  it('two workers needing a token at the same moment fetch it once (a Redis lock)', async () => {
    const before = tools.bumps;
    await Promise.all([
      ...Array.from({ length: 4 }, () => first.callTool('pair', 'bump', {})),
      ...Array.from({ length: 4 }, () => second.callTool('pair', 'bump', {})),
    ]);
    expect(tools.bumps).toBe(before + 8);
    expect(await issued(PAIR_AGENT)).toBe(1);
  });

  it('after a 401 invalid_token fetches one new token and sends the call once more; the tool runs once', async () => {
    expect((await first.callTool('main', 'bump', {})).isError).toBeFalsy();
    const [key] = await tokenKeysOf(AGENT);
    const issuedBefore = await issued(AGENT);
    const forged = `forged-${randomBytes(16).toString('hex')}`;
    seenTokens.add(forged);
    await redis.set(key, forged, 'KEEPTTL');
    const before = tools.bumps;
    const result = await first.callTool('main', 'bump', {});
    expect(result.content).toEqual([{ type: 'text', text: String(before + 1) }]);
    expect(tools.bumps).toBe(before + 1);
    expect(await issued(AGENT)).toBe(issuedBefore + 1);
    const fresh = await redis.get(key);
    expect(fresh).not.toBe(forged);
    expect(fresh).toBeTruthy();
  });

  it('after a 403 insufficient_scope asks for the challenged scope once and sends the call once more', async () => {
    const before = tools.purges;
    const result = await first.callTool('admin', 'purge', {});
    expect(result.content).toEqual([{ type: 'text', text: 'purged' }]);
    expect(tools.purges).toBe(before + 1);
    expect(await issued(SCOPE_AGENT)).toBe(2);
  });

  it('fetches a new token once the cached one is about to expire', async () => {
    const keysBefore = new Set(await tokenKeys());
    await first.callTool('short', 'bump', {});
    expect(await issued(SHORT_AGENT)).toBe(1);
    const shortKey = (await tokenKeys()).find((key) => !keysBefore.has(key));
    expect(shortKey).toBeDefined();
    const ttl = await redis.pttl(shortKey!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThan(SHORT_TTL_SEC * 1000);
    await collectTokens();
    await pollUntil('the short token to leave Redis', async () =>
      (await redis.exists(shortKey!)) === 0 ? true : undefined,
    );
    await second.callTool('short', 'bump', {});
    expect(await issued(SHORT_AGENT)).toBe(2);
  });

  it('authenticates at the token endpoint with private_key_jwt (in memory with the inline queue)', async () => {
    expect(inline.mode).toBe('inline');
    const before = tools.bumps;
    await inline.callTool('keyed', 'bump', {});
    await inline.callTool('keyed', 'bump', {});
    expect(tools.bumps).toBe(before + 2);
    expect(await issued(keyAgent)).toBe(1);
  });

  it('finds the metadata through the 401 challenge when no well-known URL serves it', async () => {
    const before = tools.bumps;
    expect((await inline.callTool('hidden', 'bump', {})).isError).toBeFalsy();
    expect(tools.bumps).toBe(before + 1);
    expect(proxyMetadataReads).toBe(1);
    expect(await issued(HIDDEN_AGENT)).toBe(1);
  });

  it('resolves an injectable auth class through DI', async () => {
    expect((await inline.callTool('injected', 'bump', {})).isError).toBeFalsy();
    expect(injected.targets).toContain(`${base}/mcp`);
    expect(await issued(DI_AGENT)).toBe(1);
  });

  it('a refused client fails the call with what the token endpoint said, never the secret', async () => {
    const error = await inline.callTool('badSecret', 'bump', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect((error as McpTransportError).delivered).toBe(false);
    expect((error as Error).message).toMatch(
      /^Could not get an access token for http:\/\/127\.0\.0\.1:\d+\/mcp: The token endpoint \S+ refused client "agent" \(HTTP 401\): invalid_client/,
    );
    expect((error as Error).message).not.toContain('not-the-agent-secret');
  });

  it('sends the client credentials only to the pinned authorization server', async () => {
    const before = as.tokensIssued(AGENT.client_id);
    const error = await inline.callTool('pinnedElsewhere', 'bump', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect((error as Error).message).toContain(
      `does not name the authorization server https://elsewhere.example (it names ${as.issuer})`,
    );
    expect(await issued(AGENT)).toBe(before);
  });

  it('never sends the client secret to the authorization server a hostile MCP server names, only to a trusted one', async () => {
    // The server's 401 names its own metadata, which names the server itself as the authorization server.
    const seen: Array<{ method: string; url: string; authorization: string; body: string }> = [];
    const rogue = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          authorization: req.headers.authorization ?? '',
          body: Buffer.concat(chunks).toString(),
        });
        const json = (body: unknown) =>
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        if (req.url === '/meta') return void json({ resource: `${rogueBase}/mcp`, authorization_servers: [rogueBase] });
        if (req.url === '/.well-known/oauth-authorization-server')
          return void json({ issuer: rogueBase, token_endpoint: `${rogueBase}/token` });
        if (req.url === '/token') return void json({ access_token: 'rogue-token', token_type: 'Bearer' });
        if (req.url?.startsWith('/.well-known/')) return void res.writeHead(404).end();
        res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${rogueBase}/meta"` }).end();
      });
    });
    await new Promise<void>((resolve) => rogue.listen(0, '127.0.0.1', resolve));
    const rogueBase = `http://127.0.0.1:${(rogue.address() as { port: number }).port}`;
    try {
      const client = await clientApp({
        servers: {
          rogue: {
            url: `${rogueBase}/mcp`,
            auth: clientCredentials({
              clientId: AGENT.client_id,
              clientSecret: AGENT.client_secret,
              trustedAuthorizationServers: [as.issuer],
            }),
          },
        },
      });
      const before = await issued(AGENT);
      const error = await client.callTool('rogue', 'bump', {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect((error as McpTransportError).delivered).toBe(false);
      expect((error as Error).message).toContain(
        `does not name the authorization server ${as.issuer} (it names ${rogueBase})`,
      );
      expect((error as Error).cause).toBeInstanceOf(McpUntrustedAuthorizationServerError);
      expect(seen.filter((hit) => hit.url === '/token')).toEqual([]);
      const basic = Buffer.from(`${AGENT.client_id}:${AGENT.client_secret}`).toString('base64');
      expect(seen.some((hit) => hit.authorization.includes(basic) || hit.body.includes(AGENT.client_secret!))).toBe(
        false,
      );
      expect(await issued(AGENT)).toBe(before);
    } finally {
      rogue.closeAllConnections();
      await new Promise((resolve) => rogue.close(resolve));
    }
  });

  it('staticToken sends its token; a refused one fails with the credentials error, token redacted', async () => {
    expect((await inline.callTool('plain', 'bump', {})).isError).toBeFalsy();
    const error = await inline.callTool('wrong', 'bump', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect((error as McpTransportError).status).toBe(401);
    expect((error as Error).message).toMatch(/refused the credentials: HTTP 401/);
    expect((error as Error).message).not.toContain('wrong-static-token');
  });

  it('retries a refused request once only: a second 401 fails the call, redacted', async () => {
    const seen: string[] = [];
    const refusing = createServer((req, res) => {
      // The session's standalone GET stream is refused too; the POSTs are what this is about.
      if (req.method === 'POST') seen.push(req.headers.authorization ?? '');
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer error="invalid_token"' }).end();
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const invalidated: Array<{ refused?: string; challenge?: McpAuthChallenge }> = [];
    let issuedTokens = 0;
    const rotating: McpClientAuth = {
      getToken: async () => `rotating-token-${issuedTokens > invalidated.length ? issuedTokens : ++issuedTokens}`,
      invalidate: async (_target, _store, refused, challenge) => void invalidated.push({ refused, challenge }),
    };
    try {
      const transport = new HttpTransport({
        url: `http://127.0.0.1:${(refusing.address() as { port: number }).port}/mcp`,
        auth: rotating,
        retry: { retries: 0 },
      });
      const call = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'bump', arguments: {} } };
      const error = await transport
        .deliver(call, {
          sessionId: 'session-1',
          protocolVersion: '2025-11-25',
          context: { server: 'refusing', scopeKey: '', timeoutMs: 10_000 },
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect((error as McpTransportError).status).toBe(401);
      expect((error as McpTransportError).delivered).toBe(false);
      expect((error as Error).message).not.toContain('rotating-token');
      expect(seen).toEqual(['Bearer rotating-token-1', 'Bearer rotating-token-2']);
      expect(invalidated).toEqual([
        {
          refused: 'rotating-token-1',
          challenge: { status: 401, error: 'invalid_token', scope: null, resourceMetadata: null },
        },
      ]);
    } finally {
      refusing.closeAllConnections();
      await new Promise((resolve) => refusing.close(resolve));
    }
  });

  it('never writes a token or a client secret to an event row, a session row or a log line', async () => {
    // Its own traffic: two tokens of its own client around a forged one refused with a 401, and both static tokens.
    const own = new Set<string>(['plain-token', 'wrong-static-token']);
    const keysBefore = new Set(await tokenKeys());
    expect((await first.callTool('leak', 'bump', {})).isError).toBeFalsy();
    const leakKeys = (await tokenKeys()).filter((key) => !keysBefore.has(key));
    expect(leakKeys).toHaveLength(1);
    own.add((await redis.get(leakKeys[0]))!);
    const forged = `forged-${randomBytes(16).toString('hex')}`;
    own.add(forged);
    await redis.set(leakKeys[0], forged, 'KEEPTTL');
    expect((await second.callTool('leak', 'bump', {})).isError).toBeFalsy();
    own.add((await redis.get(leakKeys[0]))!);
    expect(await issued(LEAK_AGENT)).toBe(2);
    expect((await inline.callTool('plain', 'bump', {})).isError).toBeFalsy();
    await expect(inline.callTool('wrong', 'bump', {})).rejects.toBeInstanceOf(McpTransportError);
    expect(own.size).toBe(5);

    await collectTokens();
    // Its own rows, so the checks below read what this traffic wrote: one per bump (the 401 retry is within one exchange).
    const leakRows = await db.dataSource.query(
      `SELECT method FROM mcp_events WHERE direction = 'outbound' AND server = 'leak' AND method = 'tools/call'`,
    );
    expect(leakRows).toHaveLength(2);
    const rows = JSON.stringify([
      ...(await db.dataSource.query('SELECT * FROM mcp_events')),
      ...(await db.dataSource.query('SELECT * FROM mcp_outbound_sessions')),
      ...(await db.dataSource.query('SELECT * FROM mcp_inbound_sessions')),
    ]);
    const logs = logger.lines.join('\n');
    for (const token of [
      ...own,
      ...seenTokens,
      'not-the-agent-secret',
      LEAK_AGENT.client_secret!,
      DI_AGENT.client_secret!,
      PAIR_AGENT.client_secret!,
      AGENT.client_secret!,
      SCOPE_AGENT.client_secret!,
      SHORT_AGENT.client_secret!,
    ]) {
      expect(rows).not.toContain(token);
      expect(logs).not.toContain(token);
    }
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryOAuthClientProvider, signInThrough } from '../support/browserless-user-agent';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const CLIENT_REDIRECT = 'http://127.0.0.1:1/callback';

/**
 * The example app with AUTH_SERVER_* set, as a user starts it (SQLite, no database server): it is
 * the authorization server of its endpoint, its users signing in at an upstream OpenID Connect
 * provider (oidc-provider standing for Keycloak), and the official SDK client gets in.
 */
describe('the example app with AUTH_SERVER_PUBLIC_URL', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-auth-server-example-'));
  let upstream: TestAuthorizationServer | undefined;
  let app: ReadyChild | undefined;
  let base: string;
  // A client's Client ID Metadata Document, served over plain http on loopback.
  let documentServer: Server | undefined;
  let documentUrl: string;
  const documentFetches: string[] = [];

  beforeAll(async () => {
    documentServer = createServer((req, res) => {
      documentFetches.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: 'example app CIMD client',
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documentServer!.listen(0, '127.0.0.1', resolve));
    // https, as the draft requires of a client id; AUTH_SERVER_ALLOW_LOOPBACK_HTTP has it fetched over http.
    documentUrl = `https://127.0.0.1:${(documentServer.address() as AddressInfo).port}/client.json`;
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    const client = {
      client_id: 'example-app',
      client_secret: 'example-app-secret-0123456789abcdef',
      scope: 'openid',
      redirect_uris: [`${base}/oauth/upstream/callback`],
    } satisfies OidcClient;
    upstream = await startAuthorizationServer([client], {});
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AUTH_SERVER_PUBLIC_URL: base,
      AUTH_SERVER_UPSTREAM_ISSUER: upstream.issuer,
      AUTH_SERVER_CLIENT_ID: client.client_id,
      AUTH_SERVER_CLIENT_SECRET: client.client_secret,
      AUTH_SERVER_ALLOW_LOOPBACK_HTTP: '1',
      AUTH_SERVER_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'MCP_TOKENS', 'OAUTH_ISSUER', 'OAUTH_AUDIENCE']) delete env[name];
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
  });

  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
    documentServer?.closeAllConnections();
    await new Promise((resolve) => documentServer?.close(resolve));
    rmSync(workdir, { recursive: true, force: true });
  });

  it('says where users sign in, and lets the SDK client register, sign in upstream and call a tool', async () => {
    expect(app!.output()).toContain(
      `OAuth: authorization server ${base}/oauth, users signing in at ${upstream!.issuer} (register ${base}/oauth/upstream/callback there as the redirect URI)`,
    );
    expect(app!.output()).not.toContain('demo bearer token');
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'example-as', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === upstream!.issuer ? { 'x-test-user': 'dana' } : {}),
    );
    await first.finishAuth(new URL(url).searchParams.get('code')!);
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'example-as', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      // The default mapping: the key is `<upstream issuer>#<sub>`, the label the first name-like claim, else sub.
      expect(result.structuredContent).toMatchObject({ principal: 'dana' });
    } finally {
      await client.close();
    }
  });

  it('with AUTH_SERVER_ALLOW_LOOPBACK_HTTP=1, lets a client known by an https://127.0.0.1 metadata document in without registering', async () => {
    const provider = new MemoryOAuthClientProvider(CLIENT_REDIRECT, documentUrl);
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'example-as-cimd', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(documentUrl);
    const { url } = await signInThrough(
      provider.authorizationUrl!.href,
      CLIENT_REDIRECT,
      (origin): Record<string, string> => (origin === upstream!.issuer ? { 'x-test-user': 'erin' } : {}),
    );
    await first.finishAuth(new URL(url).searchParams.get('code')!);
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const client = new Client({ name: 'example-as-cimd', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hello over CIMD' } });
      expect(result.content).toEqual([{ type: 'text', text: 'hello over CIMD' }]);
    } finally {
      await client.close();
    }
    expect(documentFetches.length).toBeGreaterThan(0);
    expect(documentFetches.every((path) => path === '/client.json')).toBe(true);
  });
});

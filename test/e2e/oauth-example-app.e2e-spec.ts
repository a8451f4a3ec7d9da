import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { initializeRequest, post } from '../support/mcp-wire';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');
const AGENT = {
  client_id: 'example-agent',
  client_secret: 'example-agent-secret-0123456789abcdef',
  scope: 'mcp:tools',
} satisfies OidcClient;

/**
 * The example app with OAUTH_ISSUER set, as a user starts it: it takes JWT access tokens of a
 * real authorization server instead of MCP_TOKENS, and the official SDK client finds that server
 * from the app's 401.
 */
describe('the example app with OAUTH_ISSUER', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-oauth-example-'));
  let as: TestAuthorizationServer | undefined;
  let app: ReadyChild | undefined;
  let url: string;

  beforeAll(async () => {
    const port = await freeLoopbackPort();
    url = `http://127.0.0.1:${port}/mcp`;
    as = await startAuthorizationServer([AGENT], {
      [url]: { scope: 'mcp:tools' },
      'https://elsewhere.example/mcp': { scope: 'mcp:tools' },
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      OAUTH_ISSUER: as.issuer,
      OAUTH_SCOPES: 'mcp:tools',
      HOST: '127.0.0.1',
      PORT: String(port),
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'MCP_TOKENS', 'OAUTH_AUDIENCE']) delete env[name];
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
  });

  afterAll(async () => {
    await app?.stop();
    await as?.stop();
    rmSync(workdir, { recursive: true, force: true });
  });

  it('announces the issuer before the endpoint, prints no demo token, and challenges a bare request with its metadata', async () => {
    expect(app!.output()).not.toContain('demo bearer token');
    expect(app!.output()).toContain(`OAuth: JWT access tokens from ${as!.issuer}`);
    const reply = await post(url, initializeRequest(), { token: null });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${new URL(url).origin}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
    );
  });

  it('serves the SDK client that discovered the authorization server, and refuses a token for another resource', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: AGENT.client_id,
      clientSecret: AGENT.client_secret,
      scope: 'mcp:tools',
      expectedIssuer: as!.issuer,
    });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    const client = new Client({ name: 'oauth-example-e2e', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([
      { type: 'text', text: 'hi' },
    ]);
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({
      principal: 'example-agent',
    });
    await client.close();

    const elsewhere = await as!.token(AGENT, 'https://elsewhere.example/mcp', 'mcp:tools');
    expect((await post(url, initializeRequest(), { token: elsewhere })).status).toBe(401);
  });
});

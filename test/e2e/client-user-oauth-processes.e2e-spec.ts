import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { authorizationCode, MCP_ENTITIES, McpClientModule, McpClientService, McpOAuthService } from '../../src/mcp';
import { McpGrantSealer } from '../../src/mcp/client/auth/authorization-code/grant-sealer';
import { McpOAuthGrant } from '../../src/mcp/persistence/entities';
import type { OAuthWorkerAnswer, OAuthWorkerConfig } from '../fixtures/client/oauth-worker-app';
import { CapturingLogger } from '../support/capturing-logger';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { pollUntil } from '../support/polling';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startOAuthResourceServer } from '../fixtures/client/oauth-resource-server';

jest.setTimeout(120_000);

const KEYS = [{ id: 'k1', key: randomBytes(32).toString('base64') }];
const ROOT = join(__dirname, '..', '..');

/**
 * User-delegated OAuth across two worker processes: worker A is this process's app (it answers
 * the callback), worker B a separate Node process (test/fixtures/client/oauth-worker-app.ts)
 * sharing the PostgreSQL database, where the grants and the refresh lease live. The authorization
 * server is oidc-provider, the user agent browserless, the MCP server ours (JwtVerifier).
 */
describe('Outbound OAuth (authorizationCode) across two worker processes', () => {
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];
  let db: TestDatabase;
  let as: TestAuthorizationServer;
  let client: OidcClient;
  let workerA: { client: McpClientService; oauth: McpOAuthService };
  let workerB: ReadyChild | undefined;
  let workerBase: string;

  const whoamiA = (scopeKey: string) =>
    workerA.client.callTool('crm', 'whoami', {}, { scopeKey }).then((result) => {
      const content = (result as { content: Array<{ text: string }> }).content;
      return JSON.parse(content[0].text) as unknown;
    });

  const whoamiB = async (scopeKey: string): Promise<OAuthWorkerAnswer> => {
    const response = await fetch(`${workerBase}/whoami/${encodeURIComponent(scopeKey)}`);
    expect(response.status).toBe(200);
    return (await response.json()) as OAuthWorkerAnswer;
  };

  const grantRow = (scopeKey: string) =>
    db.dataSource.getRepository(McpOAuthGrant).findOneByOrFail({ server: 'crm', scopeKey });

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freeLoopbackPort();
    const base = `http://127.0.0.1:${port}`;
    const callbackPort = await freeLoopbackPort();
    const redirectUri = `http://127.0.0.1:${callbackPort}/mcp-oauth/callback`;
    client = {
      client_id: 'two-process-app',
      client_secret: randomBytes(24).toString('hex'),
      scope: 'mcp:tools',
      redirect_uris: [redirectUri],
    };
    as = await startAuthorizationServer([client], { [`${base}/mcp`]: { scope: 'mcp:tools' } });

    const server = await startOAuthResourceServer(db.url, base, as.issuer, logger, 3);
    apps.push(server);

    const clientRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, extra: { max: 3 } }),
        McpClientModule.forRoot({
          servers: {
            crm: {
              url: `${base}/mcp`,
              scope: 'principal',
              auth: authorizationCode({
                clientId: client.client_id,
                clientSecret: client.client_secret,
                authorizationServer: as.issuer,
              }),
            },
          },
          oauth: { redirectUri, encryptionKeys: KEYS },
          oauthCallbackPath: '/mcp-oauth/callback',
        }),
      ],
    }).compile();
    const app = clientRef.createNestApplication({ logger });
    await app.listen(callbackPort, '127.0.0.1');
    apps.push(app);
    workerA = { client: app.get(McpClientService), oauth: app.get(McpOAuthService) };

    const config: OAuthWorkerConfig = {
      databaseUrl: db.url,
      serverUrl: `${base}/mcp`,
      issuer: as.issuer,
      clientId: client.client_id,
      clientSecret: client.client_secret,
      redirectUri,
      encryptionKeys: KEYS,
    };
    workerB = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'test', 'fixtures', 'client', 'oauth-worker-app.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          OAUTH_WORKER_CONFIG: JSON.stringify(config),
          TS_NODE_PROJECT: join(ROOT, 'tsconfig.spec.json'),
        },
      },
      /ready (\d+)/,
    );
    workerBase = `http://127.0.0.1:${workerB.ready[1]}`;
  });

  afterAll(async () => {
    // First, and whatever failed: no worker process outlives the suite.
    await workerB?.stop(5_000);
    for (const app of apps.reverse()) await app.close();
    await as?.stop();
    await db?.drop();
  });

  it('runs worker B in a process of its own', () => {
    expect(workerB?.child.pid).toBeDefined();
    expect(workerB?.child.pid).not.toBe(process.pid);
  });

  it('refuses worker B a call for a user who has not authorized, with McpAuthorizationRequiredError', async () => {
    expect(await whoamiB('nobody')).toMatchObject({ error: 'McpTransportError', reason: 'none' });
  });

  it('uses in worker B the token the user obtained through worker A', async () => {
    const done = await as.authorize(await workerA.oauth.authorizationUrl('crm', 'alice'), 'alice');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Authorization complete');
    const codeGrants = as.grantRequests(client.client_id, 'authorization_code');
    expect(await whoamiB('alice')).toEqual({ principal: expect.objectContaining({ key: 'alice' }) });
    expect(await whoamiA('alice')).toMatchObject({ key: 'alice' });
    // Worker B asked the authorization server for nothing: it used the grant worker A stored.
    expect(as.grantRequests(client.client_id, 'authorization_code')).toBe(codeGrants);
    expect(as.grantRequests(client.client_id, 'refresh_token')).toBe(0);
  });

  it('refreshes an expired grant once when both workers call at the same moment, rotating the refresh token', async () => {
    await as.authorize(await workerA.oauth.authorizationUrl('crm', 'bob'), 'bob');
    const before = await grantRow('bob');
    const sealer = new McpGrantSealer(KEYS);
    const refreshBefore = sealer.open(before, 'refresh');
    await db.dataSource.getRepository(McpOAuthGrant).update({ id: before.id }, { expiresAt: new Date(0) });
    const refreshes = as.grantRequests(client.client_id, 'refresh_token');

    const [a, b] = await Promise.all([whoamiA('bob'), whoamiB('bob')]);

    expect(a).toMatchObject({ key: 'bob' });
    expect(b).toEqual({ principal: expect.objectContaining({ key: 'bob' }) });
    // The token endpoint saw one refresh request (answered or refused), whichever process made it.
    expect(as.grantRequests(client.client_id, 'refresh_token') - refreshes).toBe(1);
    const after = await grantRow('bob');
    expect(after.expiresAt.getTime()).toBeGreaterThan(Date.now());
    const refreshAfter = sealer.open(after, 'refresh');
    expect(refreshAfter).toEqual(expect.any(String));
    expect(refreshAfter).not.toBe(refreshBefore);
    // Rotated: the authorization server no longer takes the old refresh token (oidc-provider then
    // revokes the grant as a replay, so this comes last).
    const reuse = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshBefore as string }).toString(),
    });
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: 'invalid_grant' });
    // A refused refresh counts as a request too, and the log is in order: once this one shows, a
    // second refresh by the other worker (printed earlier) would have shown as well.
    const seen = await pollUntil('the refused refresh in the authorization server log', () => {
      const count = as.grantRequests(client.client_id, 'refresh_token') - refreshes;
      return count >= 2 ? count : undefined;
    });
    expect(seen).toBe(2);
  });
});

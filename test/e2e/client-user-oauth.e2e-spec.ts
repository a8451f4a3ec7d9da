import { randomBytes } from 'node:crypto';
import { type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  authorizationCode,
  MCP_ENTITIES,
  McpClientModule,
  McpClientService,
  McpOAuthService,
  type McpClientModuleOptions,
} from '../../src/mcp';
import { McpAuthorizationRequiredError, McpTransportError } from '../../src/mcp/errors';
import { McpGrantSealer } from '../../src/mcp/client/auth/authorization-code/grant-sealer';
import { McpOAuthGrant } from '../../src/mcp/persistence/entities';
import { CapturingLogger } from '../support/capturing-logger';
import { freeLoopbackPort } from '../support/child-process';
import { startAuthorizationServer, type OidcClient, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startOAuthResourceServer } from '../fixtures/client/oauth-resource-server';

jest.setTimeout(120_000);

const KEYS = [{ id: 'k1', key: randomBytes(32).toString('base64') }];

/**
 * User-delegated OAuth of McpClientService (authorizationCode): a real authorization server
 * (oidc-provider) signs users in through a browserless user agent; our own MCP server verifies
 * the tokens (JwtVerifier); two client apps (two workers) share one PostgreSQL database.
 */
describe('Outbound OAuth (authorizationCode)', () => {
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];
  let db: TestDatabase;
  let as: TestAuthorizationServer;
  let base: string;
  let client: OidcClient;
  let callbackBase: string;
  let first: { client: McpClientService; oauth: McpOAuthService };
  let second: { client: McpClientService; oauth: McpOAuthService };

  async function clientApp(port: number): Promise<{ client: McpClientService; oauth: McpOAuthService }> {
    const options: McpClientModuleOptions = {
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
      oauth: { redirectUri: `${callbackBase}/mcp-oauth/callback`, encryptionKeys: KEYS },
      oauthCallbackPath: '/mcp-oauth/callback',
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot(options),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.listen(port, '127.0.0.1');
    apps.push(app);
    return { client: app.get(McpClientService), oauth: app.get(McpOAuthService) };
  }

  const whoami = (service: McpClientService, scopeKey: string) =>
    service.callTool('crm', 'whoami', {}, { scopeKey }).then((result) => {
      const content = (result as { content: Array<{ text: string }> }).content;
      return JSON.parse(content[0].text) as { key?: string };
    });

  const grantRow = (scopeKey: string) =>
    db.dataSource.getRepository(McpOAuthGrant).findOneByOrFail({ server: 'crm', scopeKey });

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    const callbackPort = await freeLoopbackPort();
    // Both client apps answer the callback on their own port; the redirect URI names the first.
    callbackBase = `http://127.0.0.1:${callbackPort}`;
    client = {
      client_id: 'user-agent-app',
      client_secret: randomBytes(24).toString('hex'),
      scope: 'mcp:tools',
      redirect_uris: [`${callbackBase}/mcp-oauth/callback`],
    };
    as = await startAuthorizationServer([client], { [`${base}/mcp`]: { scope: 'mcp:tools' } });
    const server = await startOAuthResourceServer(db.url, base, as.issuer, logger);
    apps.push(server);
    first = await clientApp(callbackPort);
    second = await clientApp(await freeLoopbackPort());
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await as?.stop();
    await db?.drop();
  });

  it.each([
    ['scope principal', { scope: undefined }, {}, /set scope: 'principal'/],
    ['encryption keys', {}, { encryptionKeys: undefined }, /oauth.encryptionKeys/],
    ['a redirect URI', {}, { redirectUri: 'http://app.example.com/cb' }, /oauth.redirectUri/],
  ])('refuses to boot without %s, saying what to set', async (_what, entry, oauth, message) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot({
          servers: {
            crm: {
              url: `${base}/mcp`,
              scope: 'principal',
              auth: authorizationCode({ clientId: client.client_id, authorizationServer: as.issuer }),
              ...entry,
            },
          },
          oauth: { redirectUri: `${callbackBase}/mcp-oauth/callback`, encryptionKeys: KEYS, ...oauth },
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await expect(app.init()).rejects.toThrow(message);
    await app.close();
  });

  it('refuses a call of a user without a grant at once, with what the app needs to send the user to authorize', async () => {
    const failure = await first.client.callTool('crm', 'whoami', {}, { scopeKey: 'nobody' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(McpTransportError);
    const required = McpAuthorizationRequiredError.of(failure);
    expect(required).toMatchObject({ server: 'crm', scopeKey: 'nobody', reason: 'none' });
  });

  it('sends the user to the authorization server with PKCE (S256), state, resource and the resource scopes', async () => {
    const url = new URL(await first.oauth.authorizationUrl('crm', 'carol'));
    expect(url.origin + url.pathname).toBe(`${as.issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: `${callbackBase}/mcp-oauth/callback`,
      code_challenge_method: 'S256',
      resource: `${base}/mcp`,
      scope: 'mcp:tools',
    });
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('completes the authorization in one worker, and the other worker calls with the user token', async () => {
    const done = await as.authorize(
      await first.oauth.authorizationUrl('crm', 'alice', { redirectAfter: '/done' }),
      'alice',
    );
    expect(done).toMatchObject({ status: 302, location: '/done' });
    expect(await whoami(second.client, 'alice')).toMatchObject({ key: 'alice' });
    expect(await whoami(first.client, 'alice')).toMatchObject({ key: 'alice' });
    // Sealed at rest: the row holds no token in clear.
    const row = await grantRow('alice');
    expect(row.accessToken).toMatch(/^v1:k1:/);
    expect(row.refreshToken).toMatch(/^v1:k1:/);
  });

  it('refuses a callback whose state was already used, or is unknown', async () => {
    const url = await first.oauth.authorizationUrl('crm', 'dave');
    const done = await as.authorize(url, 'dave');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Authorization complete');
    const replay = await fetch(
      `${callbackBase}/mcp-oauth/callback?code=x&state=${new URL(url).searchParams.get('state')}`,
    );
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('no pending authorization');
    const unknown = await fetch(`${callbackBase}/mcp-oauth/callback?code=x&state=unknown-state`);
    expect(unknown.status).toBe(400);
    const stateless = await fetch(`${callbackBase}/mcp-oauth/callback?code=x`);
    expect(stateless.status).toBe(400);
    expect(await stateless.text()).toContain('no "state"');
  });

  it('refreshes an expired grant once for two workers calling at the same moment, rotating the refresh token', async () => {
    await as.authorize(await first.oauth.authorizationUrl('crm', 'bob'), 'bob');
    const before = await grantRow('bob');
    await db.dataSource.getRepository(McpOAuthGrant).update({ id: before.id }, { expiresAt: new Date(0) });
    const issuedBefore = as.tokensIssued(client.client_id);
    const [a, b] = await Promise.all([whoami(first.client, 'bob'), whoami(second.client, 'bob')]);
    expect(a).toMatchObject({ key: 'bob' });
    expect(b).toMatchObject({ key: 'bob' });
    const after = await grantRow('bob');
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt.getTime()).toBeGreaterThan(Date.now());
    // The refresh grant printed its token line before the row was written.
    expect(as.tokensIssued(client.client_id) - issuedBefore).toBe(1);
  });

  it('turns a revoked refresh token into McpAuthorizationRequiredError (revoked) and keeps no token of it', async () => {
    await as.authorize(await first.oauth.authorizationUrl('crm', 'erin'), 'erin');
    const row = await grantRow('erin');
    const refresh = new McpGrantSealer(KEYS).open(row, 'refresh') as string;
    await as.revoke(client, refresh);
    await db.dataSource.getRepository(McpOAuthGrant).update({ id: row.id }, { expiresAt: new Date(0) });
    const failure = await second.client.callTool('crm', 'whoami', {}, { scopeKey: 'erin' }).catch((e: unknown) => e);
    expect(McpAuthorizationRequiredError.of(failure)).toMatchObject({
      server: 'crm',
      scopeKey: 'erin',
      reason: 'revoked',
    });
    expect(await grantRow('erin')).toMatchObject({ accessToken: '', refreshToken: null });
    // A new authorization replaces the emptied grant.
    await as.authorize(await second.oauth.authorizationUrl('crm', 'erin'), 'erin');
    expect(await whoami(second.client, 'erin')).toMatchObject({ key: 'erin' });
  });
});

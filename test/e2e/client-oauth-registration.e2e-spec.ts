import { randomBytes } from 'node:crypto';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  authorizationCode,
  JwtVerifier,
  MCP_ENTITIES,
  McpClientModule,
  McpClientService,
  McpModule,
  McpOAuthService,
  type McpAuthorizer,
  type McpClientModuleOptions,
  type McpServerConfig,
} from '../../src/mcp';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from '../../src/mcp/errors';
import { McpOAuthClient, McpOAuthGrant } from '../../src/mcp/persistence/entities';
import { CapturingLogger } from '../support/capturing-logger';
import { freeLoopbackPort } from '../support/child-process';
import { createHttpApp } from '../support/http-app';
import { LoopbackAuthorizationServer } from '../support/loopback-authorization-server';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oidc-provider';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { WhoAmITools } from '../fixtures/client/whoami-tools';

jest.setTimeout(120_000);

const KEYS = [{ id: 'k1', key: randomBytes(32).toString('base64') }];
const METADATA_PATH = '/oauth/client-metadata.json';
const CALLBACK_PATH = '/mcp-oauth/callback';

let loopback: LoopbackAuthorizationServer;

/** The resource server's view of the loopback authorization server's opaque tokens. */
@Injectable()
class LoopbackTokens implements McpAuthorizer {
  authorize(token: string) {
    const issued = loopback.accessTokens.get(token);
    return issued ? { key: issued.user } : null;
  }
}

/**
 * How authorizationCode gets a client id without one configured: dynamic registration (RFC
 * 7591) at a real oidc-provider, shared by two client apps (two workers) through the database,
 * and Client ID Metadata Documents served by the client module and fetched by a real loopback
 * authorization server (oidc-provider does not support them), which also plays the registration
 * endpoints that issue secrets, refuse, or are missing.
 */
describe('Outbound OAuth client registration (authorizationCode)', () => {
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];
  let db: TestDatabase;
  let oidc: TestAuthorizationServer;
  let oidcBase: string;
  let loopbackBase: string;
  let resourceBase: string;
  const issuedSecrets: string[] = [];
  let callbackBase: string;
  let first: { client: McpClientService; oauth: McpOAuthService };
  let second: { client: McpClientService; oauth: McpOAuthService };

  /** A client app on `port` (its callback and metadata routes), with these servers. */
  async function clientApp(
    port: number,
    servers: McpClientModuleOptions['servers'],
    extras: Partial<McpClientModuleOptions> = {},
  ): Promise<{ client: McpClientService; oauth: McpOAuthService; app: INestApplication }> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot({
          servers,
          oauth: {
            redirectUri: `${callbackBase}${CALLBACK_PATH}`,
            encryptionKeys: KEYS,
            clientName: 'Registration e2e',
          },
          oauthCallbackPath: CALLBACK_PATH,
          oauthClientMetadataPath: METADATA_PATH,
          ...extras,
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(port, '127.0.0.1');
    return { client: app.get(McpClientService), oauth: app.get(McpOAuthService), app };
  }

  /** A resource server; each its own mount name (the bearer strategies of one process share Passport's registry). */
  async function resourceServer(
    port: number,
    mount: string,
    auth: typeof JwtVerifier | typeof LoopbackTokens,
    oauth: { publicUrl: string; authorizationServers: string[]; requiredScopes?: string[] },
  ): Promise<void> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ mount, auth, providers: [WhoAmITools], oauth }),
      ],
      providers: [WhoAmITools],
    }).compile();
    const server = moduleRef.createNestApplication({ logger });
    apps.push(server);
    await server.listen(port, '127.0.0.1');
  }

  /** The servers of the two workers. */
  const workerServers = (): Record<string, McpServerConfig> => ({
    // oidc-provider announces no Client ID Metadata Documents: this one registers dynamically.
    crm: {
      url: `${oidcBase}/mcp`,
      scope: 'principal',
      auth: authorizationCode({
        clientMetadataUrl: `${callbackBase}${METADATA_PATH}`,
        dynamicRegistration: true,
        authorizationServer: oidc.issuer,
      }),
    },
    // The loopback server announces them: the metadata URL is the client id.
    docs: {
      url: `${resourceBase}/mcp`,
      scope: 'principal',
      auth: authorizationCode({
        clientMetadataUrl: `${callbackBase}${METADATA_PATH}`,
        dynamicRegistration: true,
        authorizationServer: loopback.issuer('cimd'),
      }),
    },
    // Registers where the registration endpoint issues a client secret.
    vault: {
      url: `${resourceBase}/mcp`,
      scope: 'principal',
      auth: authorizationCode({ dynamicRegistration: true, authorizationServer: loopback.issuer('secret') }),
    },
  });

  const whoami = (service: McpClientService, server: string, scopeKey: string) =>
    service.callTool(server, 'whoami', {}, { scopeKey }).then((result) => {
      const content = (result as { content: Array<{ text: string }> }).content;
      return JSON.parse(content[0].text) as { key?: string };
    });

  const registrations = (issuer: string) => db.dataSource.getRepository(McpOAuthClient).findBy({ issuer });
  const grantRow = (server: string, scopeKey: string) =>
    db.dataSource.getRepository(McpOAuthGrant).findOneByOrFail({ server, scopeKey });
  const expireGrant = async (server: string, scopeKey: string) =>
    db.dataSource
      .getRepository(McpOAuthGrant)
      .update({ id: (await grantRow(server, scopeKey)).id }, { expiresAt: new Date(0) });

  beforeAll(async () => {
    db = await createTestDatabase();
    const oidcPort = await freeLoopbackPort();
    oidcBase = `http://127.0.0.1:${oidcPort}`;
    callbackBase = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const stranger = 'http://127.0.0.1:9/elsewhere';
    loopback = await new LoopbackAuthorizationServer({
      cimd: { clientIdMetadataDocuments: true, register: false },
      secret: {
        // A confidential client, whose first secret expires and whose second does not.
        register: (_metadata, count) => {
          issuedSecrets.push(`vault-secret-${count + 1}-${randomBytes(8).toString('hex')}`);
          return {
            status: 201,
            body: {
              client_id: `vault-client-${count + 1}`,
              client_secret: issuedSecrets[count],
              client_secret_expires_at: count === 0 ? Math.floor(Date.now() / 1000) + 3600 : 0,
            },
          };
        },
      },
      refuses: {
        register: () => ({
          status: 400,
          body: { error: 'invalid_redirect_uri', error_description: 'not on the list' },
        }),
        protectedResource: true,
      },
      mute: { register: () => ({ status: 201, body: '{}' }), protectedResource: true },
      broken: { register: () => ({ status: 503, body: 'down for maintenance' }), protectedResource: true },
      closed: { register: false, protectedResource: true },
      nodocs: { register: false, protectedResource: true },
      elsewhere: { registrationEndpoint: `${stranger}/register`, protectedResource: true },
      rogue: { protectedResource: true },
    }).start();
    loopbackBase = loopback.base;
    oidc = await startAuthorizationServer([], { [`${oidcBase}/mcp`]: { scope: 'mcp:tools' } }, undefined, {
      registration: true,
    });
    // Two resource servers: one trusting oidc-provider (JWTs), one the loopback realms (opaque tokens).
    await resourceServer(oidcPort, 'default', JwtVerifier, {
      publicUrl: oidcBase,
      authorizationServers: [oidc.issuer],
      requiredScopes: ['mcp:tools'],
    });
    const resourcePort = await freeLoopbackPort();
    resourceBase = `http://127.0.0.1:${resourcePort}`;
    await resourceServer(resourcePort, 'loopback', LoopbackTokens, {
      publicUrl: resourceBase,
      authorizationServers: [loopback.issuer('cimd'), loopback.issuer('secret')],
    });
    first = await clientApp(Number(new URL(callbackBase).port), workerServers());
    second = await clientApp(await freeLoopbackPort(), workerServers());
  });
  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await oidc?.stop();
    await loopback?.stop();
    await db?.drop();
  });

  it('registers one client for two workers starting authorizations at the same moment, and keeps using it', async () => {
    const urls = await Promise.all([
      first.oauth.authorizationUrl('crm', 'alice'),
      second.oauth.authorizationUrl('crm', 'bob'),
      first.oauth.authorizationUrl('crm', 'carol'),
    ]);
    const kept = await registrations(oidc.issuer);
    expect(kept).toHaveLength(1);
    const clientId = kept[0].clientId;
    expect(urls.map((url) => new URL(url).searchParams.get('client_id'))).toEqual([clientId, clientId, clientId]);
    // Each worker may have registered once before the database chose; one registration is used.
    console.log(`dynamic registrations at oidc-provider: ${oidc.registeredClients().length}`);
    expect(oidc.registeredClients()).toContain(clientId);
    expect(oidc.registeredClients().length).toBeLessThanOrEqual(2);
    const before = oidc.registeredClients().length;
    await second.oauth.authorizationUrl('crm', 'dave');
    expect(oidc.registeredClients()).toHaveLength(before);
    // A public client: no secret kept.
    expect(kept[0]).toMatchObject({
      clientSecret: null,
      secretExpiresAt: null,
      redirectUri: `${callbackBase}${CALLBACK_PATH}`,
    });
  });

  it('authorizes a user with the registered client, calls in the other worker, and refreshes with it', async () => {
    const [registered] = await registrations(oidc.issuer);
    const done = await oidc.authorize(await first.oauth.authorizationUrl('crm', 'erin'), 'erin');
    expect(done.status).toBe(200);
    expect(await whoami(second.client, 'crm', 'erin')).toMatchObject({ key: 'erin' });
    expect(await grantRow('crm', 'erin')).toMatchObject({ clientId: registered.clientId });
    await expireGrant('crm', 'erin');
    const issued = oidc.tokensIssued(registered.clientId);
    expect(await whoami(first.client, 'crm', 'erin')).toMatchObject({ key: 'erin' });
    expect(oidc.tokensIssued(registered.clientId)).toBe(issued + 1);
  });

  it('serves the Client ID Metadata Document, whose URL is the client id where the server supports them', async () => {
    const answer = await fetch(`${callbackBase}${METADATA_PATH}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({
      client_id: `${callbackBase}${METADATA_PATH}`,
      client_name: 'Registration e2e',
      application_type: 'native',
      redirect_uris: [`${callbackBase}${CALLBACK_PATH}`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const url = await first.oauth.authorizationUrl('docs', 'frank');
    expect(new URL(url).searchParams.get('client_id')).toBe(`${callbackBase}${METADATA_PATH}`);
    const done = await loopback.authorize(url, 'frank');
    expect(done).toMatchObject({ status: 200 });
    // The authorization server fetched the document from the client module's route.
    expect(loopback.record.documentFetches.at(-1)).toMatchObject({
      url: `${callbackBase}${METADATA_PATH}`,
      status: 200,
    });
    expect(await whoami(second.client, 'docs', 'frank')).toMatchObject({ key: 'frank' });
    await expireGrant('docs', 'frank');
    expect(await whoami(first.client, 'docs', 'frank')).toMatchObject({ key: 'frank' });
    const tokens = loopback.record.tokenRequests.filter((request) => request.realm === 'cimd');
    expect(tokens.map(({ grantType, clientId, basic }) => ({ grantType, clientId, basic }))).toEqual([
      { grantType: 'authorization_code', clientId: `${callbackBase}${METADATA_PATH}`, basic: false },
      { grantType: 'refresh_token', clientId: `${callbackBase}${METADATA_PATH}`, basic: false },
    ]);
    expect(loopback.record.registrations.filter((r) => r.realm === 'cimd')).toEqual([]);
    expect(await registrations(loopback.issuer('cimd'))).toEqual([]);
  });

  it('serves the Client ID Metadata Document on Fastify too', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot({
          servers: { docs: workerServers().docs },
          oauth: { redirectUri: `${callbackBase}${CALLBACK_PATH}`, encryptionKeys: KEYS },
          oauthClientMetadataPath: METADATA_PATH,
        }),
      ],
    }).compile();
    const app = createHttpApp(moduleRef, 'fastify', { logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const answer = await fetch(`${await app.getUrl()}${METADATA_PATH}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await answer.json()).toMatchObject({
      client_id: `${callbackBase}${METADATA_PATH}`,
      client_name: 'MCP client',
      token_endpoint_auth_method: 'none',
    });
  });

  it('keeps a registered client secret sealed, authenticates with it, and registers again once it expired', async () => {
    const url = await first.oauth.authorizationUrl('vault', 'gina');
    expect(new URL(url).searchParams.get('client_id')).toBe('vault-client-1');
    const [row] = await registrations(loopback.issuer('secret'));
    expect(row.clientSecret).toMatch(/^v1:k1:/);
    expect(row.clientSecret).not.toContain('vault-secret');
    expect(row.secretExpiresAt?.getTime()).toBeGreaterThan(Date.now());
    expect(loopback.record.registrations[0].metadata).toEqual({
      client_name: 'Registration e2e',
      application_type: 'native',
      redirect_uris: [`${callbackBase}${CALLBACK_PATH}`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(await loopback.authorize(url, 'gina')).toMatchObject({ status: 200 });
    expect(await whoami(second.client, 'vault', 'gina')).toMatchObject({ key: 'gina' });
    await expireGrant('vault', 'gina');
    expect(await whoami(second.client, 'vault', 'gina')).toMatchObject({ key: 'gina' });
    const secretRequests = loopback.record.tokenRequests.filter((request) => request.realm === 'secret');
    expect(secretRequests.map(({ clientId, basic }) => ({ clientId, basic }))).toEqual([
      { clientId: 'vault-client-1', basic: true },
      { clientId: 'vault-client-1', basic: true },
    ]);
    // Still valid: reused.
    await second.oauth.authorizationUrl('vault', 'hank');
    expect(loopback.record.registrations.filter((r) => r.realm === 'secret')).toHaveLength(1);
    // Expired: replaced by a new registration, whose secret does not expire.
    await db.dataSource
      .getRepository(McpOAuthClient)
      .update({ registrationKey: row.registrationKey }, { secretExpiresAt: new Date(Date.now() - 1000) });
    const again = await first.oauth.authorizationUrl('vault', 'hank');
    expect(new URL(again).searchParams.get('client_id')).toBe('vault-client-2');
    expect(await registrations(loopback.issuer('secret'))).toMatchObject([
      { clientId: 'vault-client-2', secretExpiresAt: null },
    ]);
    expect(await loopback.authorize(again, 'hank')).toMatchObject({ status: 200 });
    expect(await whoami(first.client, 'vault', 'hank')).toMatchObject({ key: 'hank' });
    // The secrets never reach a log line or an audit row.
    const events: unknown[] = await db.dataSource.query(`SELECT * FROM mcp_events`);
    for (const secret of issuedSecrets) {
      expect(logger.lines.join('\n')).not.toContain(secret);
      expect(JSON.stringify(events)).not.toContain(secret);
    }
    expect(issuedSecrets).toHaveLength(2);
  });

  describe("with oidc-provider's Client ID Metadata Documents", () => {
    let cimd: TestAuthorizationServer;
    let wiki: { client: McpClientService; oauth: McpOAuthService };
    let metadataUrl: string;

    beforeAll(async () => {
      const resourcePort = await freeLoopbackPort();
      const wikiBase = `http://127.0.0.1:${resourcePort}`;
      cimd = await startAuthorizationServer([], { [`${wikiBase}/mcp`]: { scope: 'mcp:tools' } }, undefined, {
        clientIdMetadataDocuments: true,
      });
      await resourceServer(resourcePort, 'wiki', JwtVerifier, {
        publicUrl: wikiBase,
        authorizationServers: [cimd.issuer],
        requiredScopes: ['mcp:tools'],
      });
      // oidc-provider takes only https client ids: it reaches this app as through a TLS-terminating proxy.
      const appPort = await freeLoopbackPort();
      metadataUrl = `https://127.0.0.1:${appPort}${METADATA_PATH}`;
      wiki = await clientApp(
        appPort,
        {
          wiki: {
            url: `${wikiBase}/mcp`,
            scope: 'principal',
            auth: authorizationCode({
              clientMetadataUrl: metadataUrl,
              dynamicRegistration: true,
              authorizationServer: cimd.issuer,
            }),
          },
        },
        {
          oauth: {
            redirectUri: `http://127.0.0.1:${appPort}${CALLBACK_PATH}`,
            encryptionKeys: KEYS,
            clientName: 'Registration e2e',
          },
        },
      );
    });

    afterAll(() => cimd?.stop());

    it('uses the metadata URL as the client id: the server fetches the document, the user authorizes, calls and refreshes work', async () => {
      const url = await wiki.oauth.authorizationUrl('wiki', 'judy');
      expect(new URL(url).searchParams.get('client_id')).toBe(metadataUrl);
      const done = await cimd.authorize(url, 'judy');
      expect(done).toMatchObject({ status: 200 });
      expect(done.text).toContain('Authorization complete');
      expect(cimd.documentFetches()).toContain(metadataUrl);
      expect(await whoami(wiki.client, 'wiki', 'judy')).toMatchObject({ key: 'judy' });
      expect(await grantRow('wiki', 'judy')).toMatchObject({ clientId: metadataUrl });
      await expireGrant('wiki', 'judy');
      const issued = cimd.tokensIssued(metadataUrl);
      expect(await whoami(wiki.client, 'wiki', 'judy')).toMatchObject({ key: 'judy' });
      expect(cimd.tokensIssued(metadataUrl)).toBe(issued + 1);
      // Supported there: no registration was attempted nor kept.
      expect(await registrations(cimd.issuer)).toEqual([]);
    });
  });

  describe('when no client id can be had', () => {
    let failing: McpOAuthService;
    const realmServer = (realm: string, options: Partial<authorizationCode.Options>, trusted = realm) => ({
      url: `${loopbackBase}/${realm}/mcp`,
      scope: 'principal' as const,
      auth: authorizationCode({ authorizationServer: loopback.issuer(trusted), ...options }),
    });

    beforeAll(async () => {
      const app = await clientApp(
        await freeLoopbackPort(),
        {
          refuses: realmServer('refuses', { dynamicRegistration: true }),
          mute: realmServer('mute', { dynamicRegistration: true }),
          broken: realmServer('broken', { dynamicRegistration: true }),
          closed: realmServer('closed', { dynamicRegistration: true }),
          nodocs: realmServer('nodocs', { clientMetadataUrl: `${callbackBase}${METADATA_PATH}` }),
          elsewhere: realmServer('elsewhere', { dynamicRegistration: true }),
          rogue: realmServer('rogue', { dynamicRegistration: true }, 'cimd'),
        },
        { oauthClientMetadataPath: undefined },
      );
      failing = app.oauth;
    });

    it.each([
      [
        'refuses',
        McpOAuthClientError,
        /registration endpoint .*\/refuses\/register did not register the client \(HTTP 400\): invalid_redirect_uri \(not on the list\)$/,
      ],
      [
        'mute',
        McpOAuthClientError,
        /registration endpoint .*\/mute\/register did not register the client \(HTTP 201\)$/,
      ],
      ['broken', McpOAuthClientError, /did not register the client \(HTTP 503\)$/],
      [
        'closed',
        McpOAuthClientError,
        /supports none of the ways .*\(dynamic client registration \(registration_endpoint\)\): register the app there/,
      ],
      [
        'nodocs',
        McpOAuthClientError,
        /supports none of the ways .*\(a Client ID Metadata Document \(client_id_metadata_document_supported\)\)/,
      ],
      [
        'elsewhere',
        McpUntrustedAuthorizationServerError,
        /announces the registration endpoint "http:\/\/127\.0\.0\.1:9\/elsewhere\/register", which is not on the issuer's origin/,
      ],
      ['rogue', McpUntrustedAuthorizationServerError, /does not name the authorization server .*\/cimd/],
    ])('%s: authorizationUrl fails with what went wrong, and nothing is kept', async (server, type, message) => {
      const failure = await failing.authorizationUrl(server, 'ivy').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(type);
      expect((failure as Error).message).toMatch(message);
      expect(await registrations(loopback.issuer(server))).toEqual([]);
    });

    it('sent no registration to an issuer it does not trust, nor to an endpoint on another origin', () => {
      expect(loopback.record.registrations.filter((r) => r.realm === 'rogue' || r.realm === 'elsewhere')).toEqual([]);
    });
  });

  it.each([
    [
      'no server names a clientMetadataUrl',
      false,
      /oauthClientMetadataPath serves a Client ID Metadata Document, but no server names it/,
    ],
    [
      'servers name two',
      true,
      /name several clientMetadataUrl \(https:\/\/app\.example\.com\/other\.json, http:\/\/127\.0\.0\.1:\d+\/oauth\/client-metadata\.json\)/,
    ],
  ])('refuses to boot a metadata route when %s', async (_what, two, message) => {
    const other = {
      url: 'https://other.example.com/mcp',
      scope: 'principal' as const,
      auth: authorizationCode({
        clientMetadataUrl: 'https://app.example.com/other.json',
        authorizationServer: 'https://login.example.com',
      }),
    };
    const servers: Record<string, McpServerConfig> = two
      ? { other, docs: workerServers().docs }
      : { vault: workerServers().vault };
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpClientModule.forRoot({
          servers,
          oauth: { redirectUri: `${callbackBase}${CALLBACK_PATH}`, encryptionKeys: KEYS },
          oauthClientMetadataPath: METADATA_PATH,
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await expect(app.init()).rejects.toThrow(message);
    await app.close();
  });
});

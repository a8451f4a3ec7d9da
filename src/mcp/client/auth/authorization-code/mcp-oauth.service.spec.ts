import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { McpUnknownServerError } from '../../../errors/mcp-client-call.errors';
import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { MCP_ENTITIES } from '../../../persistence/entities';
import { McpOAuthAuthorization } from '../../../persistence/entities/oauth-authorization.entity';
import { McpOAuthGrant } from '../../../persistence/entities/oauth-grant.entity';
import { TypeOrmOAuthGrantStore } from '../../../persistence/typeorm/typeorm-oauth-grant.store';
import type { McpResolvedClientOptions } from '../../config/client-options-resolver';
import type { McpAuthChallenge } from '../mcp-client-auth.interface';
import { McpAuthorizationRequiredError, McpOAuthClientError } from '../oauth-client.errors';
import { staticToken } from '../static-token.auth';
import { authorizationCode, AuthorizationCodeAuth } from './authorization-code.auth';
import { McpGrantSealer } from './grant-sealer';
import { McpOAuthService } from './mcp-oauth.service';
import { McpOAuthCallbackError } from './oauth-callback.errors';

/** One answer of the token endpoint. */
interface TokenReply {
  status: number;
  body: unknown;
}

/** What the token endpoint received. */
interface TokenRequest {
  form: URLSearchParams;
  authorization: string | undefined;
}

const KEYS = [{ id: 'k1', key: randomBytes(32).toString('base64') }];
const OTHER_KEYS = [{ id: 'k2', key: randomBytes(32).toString('base64') }];

/** A bearer challenge as the transport hands it over: `status`, and null for what the header did not say. */
function challenge(status: 401 | 403, said: Partial<Omit<McpAuthChallenge, 'status'>> = {}): McpAuthChallenge {
  return { status, error: null, scope: null, resourceMetadata: null, ...said };
}

/** What `promise` is rejected with; fails the test when it fulfils, or rejects with something that is no Error. */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const failure = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
  if (!(failure instanceof Error)) throw new Error(`expected an Error, got ${String(failure)}`);
  return failure;
}

/**
 * McpOAuthService against a real loopback MCP resource with its authorization server (metadata
 * and token endpoint answering as each test sets them) and a real database (SQLite in memory).
 */
describe('McpOAuthService', () => {
  let server: Server;
  let origin: string;
  let dataSource: DataSource;
  let store: TypeOrmOAuthGrantStore;
  /** The Protected Resource Metadata served for /mcp. */
  let prm: Record<string, unknown>;
  /** The authorization server metadata served for the issuer `origin`. */
  let asMetadata: Record<string, unknown>;
  /** A second issuer, `${origin}/as2`. */
  let as2Metadata: Record<string, unknown>;
  let tokenReplies: TokenReply[];
  /** The scope of the 401 challenge a tokenless POST to /mcp gets; null: no challenge. */
  let challengeScope: string | null;
  let requests: TokenRequest[];

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => resolve(body));
    });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/oauth-protected-resource/mcp') return prm.down ? json(503, {}) : json(200, prm);
      if (req.url === '/.well-known/oauth-authorization-server') return json(200, asMetadata);
      if (req.method === 'POST' && req.url === '/mcp' && challengeScope !== null) {
        res.writeHead(401, { 'WWW-Authenticate': `Bearer scope="${challengeScope}"` }).end();
        return;
      }
      if (req.url === '/.well-known/oauth-authorization-server/as2') return json(200, as2Metadata);
      if (req.method === 'POST' && (req.url === '/token' || req.url === '/as2/token')) {
        void readBody(req).then((body) => {
          requests.push({ form: new URLSearchParams(body), authorization: req.headers.authorization });
          const reply = tokenReplies.shift() ?? { status: 500, body: { error: 'server_error' } };
          json(reply.status, reply.body);
        });
        return;
      }
      json(404, {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    }).initialize();
    store = new TypeOrmOAuthGrantStore(
      dataSource.getRepository(McpOAuthGrant),
      dataSource.getRepository(McpOAuthAuthorization),
    );
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await dataSource?.destroy();
  });

  beforeEach(async () => {
    prm = { resource: `${origin}/mcp`, authorization_servers: [origin], scopes_supported: ['read', 'write'] };
    asMetadata = {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    };
    as2Metadata = { ...asMetadata, issuer: `${origin}/as2`, token_endpoint: `${origin}/as2/token` };
    tokenReplies = [];
    requests = [];
    challengeScope = null;
    await dataSource.getRepository(McpOAuthGrant).clear();
    await dataSource.getRepository(McpOAuthAuthorization).clear();
  });

  interface Setup {
    auth?: Parameters<typeof authorizationCode>[0];
    keys?: typeof KEYS;
    redirectUri?: string;
    withStore?: boolean;
    init?: boolean;
  }

  function service(setup: Setup = {}): { oauth: McpOAuthService; auth: AuthorizationCodeAuth } {
    const auth = authorizationCode(
      setup.auth ?? { clientId: 'app', clientSecret: 's3cret', authorizationServer: origin },
    ) as AuthorizationCodeAuth;
    const options = {
      servers: {
        crm: { url: `${origin}/mcp`, scope: 'principal', auth },
        plain: { url: `${origin}/mcp`, scope: 'principal', auth: staticToken('t') },
      },
      oauth: {
        redirectUri: 'redirectUri' in setup ? setup.redirectUri : 'http://127.0.0.1:9/mcp-oauth/callback',
        encryptionKeys: setup.keys ?? KEYS,
        authorizationTtlMs: 600_000,
      },
    } as unknown as McpResolvedClientOptions;
    const oauth = new McpOAuthService(options, setup.withStore === false ? undefined : store);
    if (setup.init !== false) oauth.onModuleInit();
    return { oauth, auth };
  }

  const target = (scopeKey: string) => ({ url: new URL(`${origin}/mcp`), server: 'crm', scopeKey });
  const grantRow = (scopeKey: string) =>
    dataSource.getRepository(McpOAuthGrant).findOneByOrFail({ server: 'crm', scopeKey });
  const tokens = (access: string, extra: Record<string, unknown> = {}): TokenReply => ({
    status: 200,
    body: { access_token: access, token_type: 'Bearer', expires_in: 3600, refresh_token: `r-${access}`, ...extra },
  });

  /** Starts an authorization for `scopeKey` and completes it with the next token reply. */
  async function authorize(oauth: McpOAuthService, scopeKey: string, reply: TokenReply = tokens(`a-${scopeKey}`)) {
    const url = new URL(await oauth.authorizationUrl('crm', scopeKey));
    tokenReplies.push(reply);
    return oauth.completeAuthorization({ code: 'the-code', state: url.searchParams.get('state'), iss: origin });
  }

  describe('at start-up', () => {
    it('refuses an authorizationCode server without a database, or with a redirect URI that is no URL', () => {
      expect(() => service({ withStore: false })).toThrow(/grants live in the database/);
      expect(() => service({ redirectUri: 'not a url' })).toThrow(/oauth.redirectUri/);
      expect(() => service({ redirectUri: undefined })).toThrow(McpConfigurationError);
    });

    it('needs a client id in authorizationCode(), and the provider works only once the module attached it', () => {
      expect(() => authorizationCode({ clientId: '' })).toThrow(/needs "clientId"/);
      const { auth } = service({ init: false });
      expect(() => auth.getToken({ url: new URL(`${origin}/mcp`), server: 'crm' })).toThrow(
        /only usable as the "auth" of a server of McpClientModule/,
      );
      const attached = service().auth;
      expect(() => attached.getToken({ url: new URL(`${origin}/mcp`) })).toThrow(
        /tokens for calls of McpClientService only/,
      );
    });

    it('without an authorizationCode server, has nothing to do and says so when asked', async () => {
      const options = {
        servers: { plain: { url: `${origin}/mcp`, scope: 'principal', auth: staticToken('t') } },
        oauth: { authorizationTtlMs: 600_000 },
      } as unknown as McpResolvedClientOptions;
      const oauth = new McpOAuthService(options, store);
      oauth.onModuleInit();
      await expect(oauth.completeAuthorization({ state: 'x' })).rejects.toThrow(
        'No server of this client uses authorizationCode()',
      );
    });
  });

  describe('authorizationUrl', () => {
    it('discovers again after a failed discovery, instead of keeping the failure', async () => {
      const { oauth } = service();
      prm.down = true;
      await expect(oauth.authorizationUrl('crm', 'u')).rejects.toThrow(/No Protected Resource Metadata for/);
      delete prm.down;
      await expect(oauth.authorizationUrl('crm', 'u')).resolves.toContain('/authorize?');
    });

    it('refuses an unknown server, and a server whose auth is not authorizationCode', async () => {
      const { oauth } = service();
      await expect(oauth.authorizationUrl('nope', 'u')).rejects.toBeInstanceOf(McpUnknownServerError);
      await expect(oauth.authorizationUrl('plain', 'u')).rejects.toThrow(
        'MCP server "plain" does not use authorizationCode() as its auth',
      );
    });

    it('takes a path or a URL on the callback origin to send the user to afterwards, nothing else', async () => {
      const { oauth } = service();
      for (const bad of ['//evil.example/x', '/\\evil.example', 'https://evil.example/done', 'done'])
        await expect(oauth.authorizationUrl('crm', 'u', { redirectAfter: bad })).rejects.toThrow(
          /neither a path nor a URL on the origin of oauth.redirectUri/,
        );
      await expect(oauth.authorizationUrl('crm', 'u', { redirectAfter: '/done' })).resolves.toContain('/authorize?');
      await expect(
        oauth.authorizationUrl('crm', 'u', { redirectAfter: 'http://127.0.0.1:9/after' }),
      ).resolves.toContain('/authorize?');
    });

    it('refuses an authorization server without a usable authorization endpoint or without PKCE S256', async () => {
      delete asMetadata.authorization_endpoint;
      await expect(service().oauth.authorizationUrl('crm', 'u')).rejects.toThrow(
        /announces no usable authorization_endpoint/,
      );
      asMetadata.authorization_endpoint = 'http://login.example.com/authorize';
      await expect(service().oauth.authorizationUrl('crm', 'u')).rejects.toThrow(
        /announces no usable authorization_endpoint/,
      );
      asMetadata.authorization_endpoint = `${origin}/authorize`;
      asMetadata.code_challenge_methods_supported = ['plain'];
      await expect(service().oauth.authorizationUrl('crm', 'u')).rejects.toThrow(/does not announce PKCE with S256/);
    });

    it('asks for the configured scopes, else the resource scopes, else none', async () => {
      const configured = new URL(
        await service({
          auth: { clientId: 'app', authorizationServer: origin, scope: 'a b a' },
        }).oauth.authorizationUrl('crm', 'u'),
      );
      expect(configured.searchParams.get('scope')).toBe('a b');
      expect(new URL(await service().oauth.authorizationUrl('crm', 'u')).searchParams.get('scope')).toBe('read write');
      // The server's own 401 challenge names a scope: it comes before the metadata's.
      challengeScope = 'mcp:tools mcp:read';
      expect(new URL(await service().oauth.authorizationUrl('crm', 'u')).searchParams.get('scope')).toBe(
        'mcp:tools mcp:read',
      );
      challengeScope = null;
      delete prm.scopes_supported;
      expect(new URL(await service().oauth.authorizationUrl('crm', 'u')).searchParams.has('scope')).toBe(false);
    });
  });

  describe('completeAuthorization', () => {
    it('exchanges the code with the PKCE verifier and the resource, and keeps the tokens sealed', async () => {
      const { oauth, auth } = service();
      const url = new URL(await oauth.authorizationUrl('crm', 'alice', { redirectAfter: '/home' }));
      tokenReplies.push(tokens('access-1', { scope: 'read' }));
      const done = await oauth.completeAuthorization({
        code: 'code-1',
        state: url.searchParams.get('state'),
        iss: origin,
      });
      expect(done).toEqual({ server: 'crm', scopeKey: 'alice', redirectAfter: '/home' });
      const [request] = requests;
      expect(Object.fromEntries(request.form)).toMatchObject({
        grant_type: 'authorization_code',
        code: 'code-1',
        redirect_uri: 'http://127.0.0.1:9/mcp-oauth/callback',
        resource: `${origin}/mcp`,
      });
      const verifier = request.form.get('code_verifier') as string;
      expect(createHash('sha256').update(verifier).digest('base64url')).toBe(url.searchParams.get('code_challenge'));
      expect(request.authorization).toBe(`Basic ${Buffer.from('app:s3cret').toString('base64')}`);
      const row = await grantRow('alice');
      expect(row).toMatchObject({ issuer: origin, clientId: 'app', resource: `${origin}/mcp`, scope: 'read' });
      expect(row.accessToken).not.toContain('access-1');
      await expect(auth.getToken(target('alice'))).resolves.toBe('access-1');
    });

    it('refuses a callback without state, an unknown state, and a state used twice', async () => {
      const { oauth } = service();
      await expect(oauth.completeAuthorization({ code: 'c' })).rejects.toThrow('The callback has no "state"');
      await expect(oauth.completeAuthorization({ code: 'c', state: 'unknown' })).rejects.toThrow(
        /no pending authorization/,
      );
      const state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      tokenReplies.push(tokens('x'));
      await oauth.completeAuthorization({ code: 'c', state });
      await expect(oauth.completeAuthorization({ code: 'c', state })).rejects.toThrow(/no pending authorization/);
    });

    it("passes on the authorization server's refusal, with its description when it gave one", async () => {
      const { oauth } = service();
      let state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(
        oauth.completeAuthorization({ state, error: 'access_denied', error_description: 'The user said no' }),
      ).rejects.toThrow('The authorization server refused: access_denied (The user said no)');
      state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(oauth.completeAuthorization({ state, error: 'access_denied' })).rejects.toThrow(
        /refused: access_denied$/,
      );
    });

    it('refuses a callback without iss from an authorization server that announces it (RFC 9207)', async () => {
      asMetadata.authorization_response_iss_parameter_supported = true;
      const { oauth } = service();
      let state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(oauth.completeAuthorization({ code: 'c', state })).rejects.toThrow(
        `The authorization server ${origin} announces the iss parameter (RFC 9207), and the callback has none`,
      );
      expect(requests).toHaveLength(0);
      state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      tokenReplies.push(tokens('with-iss'));
      await expect(oauth.completeAuthorization({ code: 'c', state, iss: origin })).resolves.toMatchObject({
        scopeKey: 'u',
      });
    });

    it('refuses a callback from another issuer (mix-up), or without a code', async () => {
      const { oauth } = service();
      let state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(oauth.completeAuthorization({ code: 'c', state, iss: 'https://evil.example' })).rejects.toThrow(
        `names the issuer "https://evil.example", not ${origin}`,
      );
      state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(oauth.completeAuthorization({ code: 'c', state, iss: 42 })).rejects.toThrow(
        `names the issuer 42, not ${origin}`,
      );
      state = new URL(await oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(oauth.completeAuthorization({ state })).rejects.toThrow('The callback has no "code"');
      expect(requests).toHaveLength(0);
    });

    it('refuses to complete when the server now names another resource, or the keys changed', async () => {
      const first = service();
      let state = new URL(await first.oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      prm.resource = origin;
      await expect(service().oauth.completeAuthorization({ code: 'c', state })).rejects.toThrow(
        /names another authorization server or resource than when the authorization started/,
      );
      prm.resource = `${origin}/mcp`;
      state = new URL(await first.oauth.authorizationUrl('crm', 'u')).searchParams.get('state');
      await expect(service({ keys: OTHER_KEYS }).oauth.completeAuthorization({ code: 'c', state })).rejects.toThrow(
        'The pending authorization does not open with the configured keys: start again',
      );
      expect(requests).toHaveLength(0);
    });

    it('turns a refused code exchange into a callback error that shows no code or secret', async () => {
      const { oauth } = service();
      const failure = await failureOf(
        authorize(oauth, 'u', {
          status: 400,
          body: { error: 'invalid_grant', error_description: 'code expired' },
        }),
      );
      expect(failure).toBeInstanceOf(McpOAuthCallbackError);
      expect(failure.message).toContain(
        'refused the authorization_code grant of client "app" (HTTP 400): invalid_grant (code expired)',
      );
      expect(failure.message).not.toContain('the-code');
      expect(failure.message).not.toContain('s3cret');
      await expect(dataSource.getRepository(McpOAuthGrant).count()).resolves.toBe(0);
    });
  });

  describe('the tokens of a call', () => {
    it('refuses a user without a grant, and a grant without refresh token once its access token expired', async () => {
      const { oauth, auth } = service();
      await expect(auth.getToken(target('nobody'))).rejects.toMatchObject({
        constructor: McpAuthorizationRequiredError,
        reason: 'none',
      });
      await authorize(oauth, 'u', tokens('a-1', { refresh_token: undefined }));
      await expect(auth.getToken(target('u'))).resolves.toBe('a-1');
      await dataSource.getRepository(McpOAuthGrant).update({ scopeKey: 'u' }, { expiresAt: new Date(0) });
      await expect(auth.getToken(target('u'))).rejects.toMatchObject({ reason: 'none' });
    });

    it('refreshes an expired token once for concurrent calls, keeping the refresh token and scope the server did not renew', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u', tokens('a-1', { scope: 'read' }));
      const before = await grantRow('u');
      await dataSource.getRepository(McpOAuthGrant).update({ id: before.id }, { expiresAt: new Date(0) });
      tokenReplies.push({ status: 200, body: { access_token: 'a-2', expires_in: 60 } });
      const answers = await Promise.all([auth.getToken(target('u')), auth.getToken(target('u'))]);
      expect(answers).toEqual(['a-2', 'a-2']);
      expect(requests.slice(1).map((r) => Object.fromEntries(r.form))).toEqual([
        { grant_type: 'refresh_token', refresh_token: 'r-a-1', resource: `${origin}/mcp` },
      ]);
      const after = await grantRow('u');
      expect(after).toMatchObject({ refreshToken: before.refreshToken, scope: 'read', refreshingUntil: null });
      expect(after.version).toBeGreaterThan(before.version);
      // A renewed scope replaces the old one.
      await dataSource.getRepository(McpOAuthGrant).update({ id: before.id }, { expiresAt: new Date(0) });
      tokenReplies.push(tokens('a-3', { scope: 'read write' }));
      await expect(auth.getToken(target('u'))).resolves.toBe('a-3');
      expect(await grantRow('u')).toMatchObject({ scope: 'read write' });
    });

    it('waits for the process that holds the refresh lease, and takes the tokens it wrote', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u');
      const repository = dataSource.getRepository(McpOAuthGrant);
      await repository.update(
        { scopeKey: 'u' },
        { expiresAt: new Date(0), refreshingUntil: new Date(Date.now() + 60_000) },
      );
      const leased = await grantRow('u');
      const waiting = auth.getToken(target('u'));
      // The other process finishes its refresh a moment later.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sealed = new McpGrantSealer(KEYS).sealTokens(
        'crm',
        'u',
        { accessToken: 'from-the-other', refreshToken: 'r-2', expiresInSec: 600, scope: null },
        null,
      );
      await expect(store.refreshed(leased, sealed)).resolves.toBe(true);
      await expect(waiting).resolves.toBe('from-the-other');
      expect(requests).toHaveLength(1);
    });

    it('turns a refused refresh token into a revoked grant, emptied, until the user authorizes again', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u');
      await dataSource.getRepository(McpOAuthGrant).update({ scopeKey: 'u' }, { expiresAt: new Date(0) });
      tokenReplies.push({ status: 400, body: { error: 'invalid_grant' } });
      await expect(auth.getToken(target('u'))).rejects.toMatchObject({ reason: 'revoked' });
      expect(await grantRow('u')).toMatchObject({ accessToken: '', refreshToken: null, refreshingUntil: null });
      await expect(auth.getToken(target('u'))).rejects.toMatchObject({ reason: 'revoked' });
      expect(requests).toHaveLength(2);
      await authorize(oauth, 'u', tokens('again'));
      await expect(auth.getToken(target('u'))).resolves.toBe('again');
    });

    it('releases the lease when the token endpoint fails otherwise, so that the next call tries again', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u');
      await dataSource.getRepository(McpOAuthGrant).update({ scopeKey: 'u' }, { expiresAt: new Date(0) });
      tokenReplies.push({ status: 503, body: 'down' });
      const failure = await failureOf(auth.getToken(target('u')));
      expect(failure).toBeInstanceOf(McpOAuthClientError);
      expect(failure).not.toBeInstanceOf(McpAuthorizationRequiredError);
      expect(failure.message).toMatch(/refused the refresh_token grant of client "app" \(HTTP 503\)$/);
      expect(await grantRow('u')).toMatchObject({ refreshingUntil: null });
      tokenReplies.push(tokens('a-2'));
      await expect(auth.getToken(target('u'))).resolves.toBe('a-2');
    });

    it('follows a server that moved to another authorization server: no refresh there, the user authorizes at the new one', async () => {
      const setup = { auth: { clientId: 'app', trustedAuthorizationServers: [origin, `${origin}/as2`] } };
      const { oauth, auth } = service(setup);
      await authorize(oauth, 'u');
      prm.authorization_servers = [`${origin}/as2`];
      // The server refuses the old issuer's token: the client forgets what it discovered.
      await auth.invalidate(target('u'), null, 'a-u', challenge(401));
      const failure = await failureOf(auth.getToken(target('u')));
      expect(failure).toMatchObject({ constructor: McpAuthorizationRequiredError, reason: 'none' });
      expect(failure.message).toContain(
        `MCP server "crm" now names the authorization server ${origin}/as2, not ${origin} that issued the grant: the user must authorize there`,
      );
      expect(requests).toHaveLength(1);
      expect(await grantRow('u')).toMatchObject({ refreshingUntil: null });
      const url = new URL(await oauth.authorizationUrl('crm', 'u'));
      tokenReplies.push(tokens('from-as2'));
      await oauth.completeAuthorization({ code: 'c', state: url.searchParams.get('state'), iss: `${origin}/as2` });
      expect(await grantRow('u')).toMatchObject({ issuer: `${origin}/as2` });
      await expect(auth.getToken(target('u'))).resolves.toBe('from-as2');
    });
  });

  describe('a refused token', () => {
    it('expires the access token on a 401 when it is still the current one, and then refreshes', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u');
      await auth.invalidate(target('u'), null, 'an-older-token', challenge(401));
      expect((await grantRow('u')).expiresAt.getTime()).toBeGreaterThan(Date.now());
      await auth.invalidate(target('u'), null);
      expect((await grantRow('u')).expiresAt.getTime()).toBeGreaterThan(Date.now());
      await auth.invalidate(target('u'), null, 'a-u', challenge(401));
      expect((await grantRow('u')).expiresAt.getTime()).toBe(0);
      tokenReplies.push(tokens('a-2'));
      await expect(auth.getToken(target('u'))).resolves.toBe('a-2');
      // No grant: nothing to expire.
      await expect(auth.invalidate(target('other'), null, 't', challenge(401))).resolves.toBeUndefined();
    });

    it('on 403 insufficient_scope, asks the user for the grant scopes and the challenged ones', async () => {
      const { oauth, auth } = service();
      await authorize(oauth, 'u', tokens('a-u', { scope: 'read' }));
      const failure = await auth
        .invalidate(target('u'), null, 'a-u', challenge(403, { error: 'insufficient_scope', scope: 'write read' }))
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ constructor: McpAuthorizationRequiredError, reason: 'insufficient_scope' });
      expect(await grantRow('u')).toMatchObject({ wantedScope: 'read write' });
      const url = new URL(await oauth.authorizationUrl('crm', 'u'));
      expect(url.searchParams.get('scope')).toBe('read write');
      await expect(
        auth.invalidate(target('u'), null, 'a-u', challenge(403, { error: 'insufficient_scope' })),
      ).rejects.toMatchObject({ reason: 'insufficient_scope' });
    });
  });

  describe('the token endpoint request', () => {
    it('sends a public client its id in the form, and a client_secret_post client its secret there', async () => {
      await authorize(service({ auth: { clientId: 'public-app', authorizationServer: origin } }).oauth, 'p');
      expect(requests[0].authorization).toBeUndefined();
      expect(requests[0].form.get('client_id')).toBe('public-app');
      expect(requests[0].form.has('client_secret')).toBe(false);
      asMetadata.token_endpoint_auth_methods_supported = ['client_secret_post'];
      await authorize(service().oauth, 'q');
      expect(requests[1].authorization).toBeUndefined();
      expect(Object.fromEntries(requests[1].form)).toMatchObject({ client_id: 'app', client_secret: 's3cret' });
    });

    it('refuses an answer without an access token or with a token type other than Bearer', async () => {
      await expect(authorize(service().oauth, 'u', { status: 200, body: { token_type: 'Bearer' } })).rejects.toThrow(
        /refused the authorization_code grant of client "app" \(HTTP 200\)$/,
      );
      await expect(authorize(service().oauth, 'u', tokens('a', { token_type: 'DPoP' }))).rejects.toThrow(
        /issued a token of type "DPoP"; only Bearer tokens are supported/,
      );
    });

    it('takes five minutes for a token without expires_in', async () => {
      await authorize(service().oauth, 'u', { status: 200, body: { access_token: 'a' } });
      const row = await grantRow('u');
      const lifetime = row.expiresAt.getTime() - Date.now();
      expect(lifetime).toBeGreaterThan(200_000);
      expect(lifetime).toBeLessThanOrEqual(300_000);
    });
  });
});

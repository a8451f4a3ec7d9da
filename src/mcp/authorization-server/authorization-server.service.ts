import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { requireOptionalPeer } from '../optional-peer';
import { McpProtectedResourceMounts } from '../server/oauth/protected-resource-mounts';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../server/oauth/authorization-server-metadata';
import type { McpResolvedAuthorizationServerOptions, McpUpstreamPrincipal } from './authorization-server.options';
import {
  MCP_AUTHORIZATION_SERVER_OPTIONS,
  MCP_AUTHORIZATION_SERVER_DATA_SOURCE,
} from './authorization-server.constants';
import { loadProviderKeys, providerJwks, rotatedKeys, saveProviderKeys, type ProviderKeys } from './provider-keys';
import type { NodeHandler, OidcProvider, OidcProviderPackage, ProviderClient } from './oidc-provider.interface';
import { TypeOrmProviderAdapter } from './provider-record.store';
import {
  McpUpstreamSignInError,
  newTransaction,
  upstreamSignIn,
  type UpstreamSignIn,
  type UpstreamTransaction,
} from './upstream-sign-in';

/** Adapter models of the module's own records, beside oidc-provider's. */
const UPSTREAM_MODEL = 'McpUpstreamSignIn';
const ACCOUNT_MODEL = 'McpAccount';

/** How long a sign-in at the upstream provider may take, in seconds. */
const UPSTREAM_SIGN_IN_TTL_SEC = 600;

/** How often a replica deletes expired rows and looks at the shared keys (they may have rotated). */
const MAINTENANCE_MS = 60_000;

const LABEL_CLAIMS = ['name', 'preferred_username', 'email', 'login'];

/** The principal of an upstream user when the host gives no mapping: `<issuer>#<sub>`. */
export function defaultUpstreamPrincipal(claims: Record<string, unknown>, issuer: string): McpUpstreamPrincipal {
  const sub = String(claims.sub);
  const label = LABEL_CLAIMS.map((claim) => claims[claim]).find((value) => typeof value === 'string' && value !== '');
  return { key: `${issuer}#${sub}`, label: (label as string | undefined) ?? sub };
}

/** An OAuth error as JSON (RFC 6749 section 5.2), never a stack trace. */
function sendError(res: ServerResponse, status: number, error: string, description: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ error, error_description: description }));
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store' }).end();
}

/**
 * The authorization server of `McpAuthorizationServerModule`: oidc-provider with its state in the
 * host's database, served on the app's HTTP server under the issuer's path, signing users in at
 * the upstream identity provider. Access tokens are JWTs for the mounts' resources (RFC 8707),
 * which each mount's `JwtVerifier` checks against the published keys.
 */
@Injectable()
export class McpAuthorizationServer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(McpAuthorizationServer.name);
  private provider?: OidcProvider;
  private callback?: NodeHandler;
  private keys?: { keys: ProviderKeys; text: string };
  private timer?: NodeJS.Timeout;
  /** The key the provider signs access tokens with. */
  private signerKid?: string;
  private readonly upstream: UpstreamSignIn;
  private readonly Adapter: new (model: string) => TypeOrmProviderAdapter;
  private readonly upstreamSignIns: TypeOrmProviderAdapter;
  private readonly accounts: TypeOrmProviderAdapter;

  /** @internal Built by Nest from the module's options. */
  constructor(
    @Inject(MCP_AUTHORIZATION_SERVER_OPTIONS) private readonly options: McpResolvedAuthorizationServerOptions,
    @Inject(MCP_AUTHORIZATION_SERVER_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly mounts: McpProtectedResourceMounts,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.upstream = upstreamSignIn(options.upstream, this.upstreamRedirectUri, {
      timeoutMs: options.upstreamTimeoutMs,
      maxBytes: DEFAULT_MAX_RESPONSE_BYTES,
    });
    this.Adapter = TypeOrmProviderAdapter.forDataSource(dataSource);
    this.upstreamSignIns = new this.Adapter(UPSTREAM_MODEL);
    this.accounts = new this.Adapter(ACCOUNT_MODEL);
  }

  /** The issuer identifier, as the mounts' Protected Resource Metadata names it. */
  get issuer(): string {
    return this.options.issuer;
  }

  /** Where the upstream provider sends the user back: register it there as the redirect URI. */
  get upstreamRedirectUri(): string {
    return `${this.options.issuer}/upstream/callback`;
  }

  /** Reads (or makes) the shared keys and mounts the server on the app's HTTP server. */
  async onModuleInit(): Promise<void> {
    this.keys = await loadProviderKeys(this.dataSource, Date.now());
    this.install();
    this.timer = setInterval(() => void this.maintain(), MAINTENANCE_MS);
    this.timer.unref();
  }

  /** Deletes the expired rows and rotates the keys when due; a failure is logged and tried next time. */
  private async maintain(): Promise<void> {
    try {
      await this.pruneExpired();
      await this.rotateKeys();
    } catch (error) {
      this.logger.error(`Authorization server maintenance failed: ${(error as Error).message}`);
    }
  }

  /**
   * Deletes the rows (codes, tokens, sessions, interactions, sign-ins in progress...) that expired
   * before `now`; returns how many. Runs once a minute on every replica; a host or a test may call it.
   */
  pruneExpired(now = new Date()): Promise<number> {
    return TypeOrmProviderAdapter.deleteExpired(this.dataSource, now);
  }

  /**
   * Builds the provider once every mount registered its resource and scopes (they register in
   * their own `onModuleInit`), before the app listens.
   */
  onApplicationBootstrap(): void {
    this.build();
  }

  /** Stops the maintenance timer. */
  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * One step of key rotation at `nowMs`: adds the next key or drops a retired one when it is
   * time (see `keyRotationSec`), or takes the keys another replica rotated. Runs on a timer; a
   * host or a test may call it.
   */
  async rotateKeys(nowMs = Date.now()): Promise<void> {
    const current = await loadProviderKeys(this.dataSource, nowMs);
    let next = current;
    if (this.options.keyRotationSec > 0) {
      const rotated = await rotatedKeys(
        current.keys,
        nowMs,
        this.options.keyRotationSec * 1000,
        this.options.accessTokenTtlSec * 1000,
      );
      if (rotated && (await saveProviderKeys(this.dataSource, current.text, rotated)))
        next = { keys: rotated, text: JSON.stringify(rotated) };
      else if (rotated) next = await loadProviderKeys(this.dataSource, nowMs);
    }
    if (next.text !== this.keys?.text || providerJwks(next.keys, nowMs).keys[0].kid !== this.signerKid) {
      this.keys = next;
      this.build(nowMs);
    }
  }

  private build(nowMs = Date.now()): void {
    const loaded = requireOptionalPeer<OidcProviderPackage>('oidc-provider', 'McpAuthorizationServerModule');
    const Provider = loaded.default ?? loaded.Provider;
    const { errors } = loaded;
    const options = this.options;
    const keys = this.keys!.keys;
    const jwks = providerJwks(keys, nowMs);
    // The key access tokens are signed with, named: oidc-provider would otherwise take any RS256 key.
    const signer = jwks.keys[0].kid;
    this.signerKid = signer;
    const provider = new Provider(options.issuer, {
      adapter: this.Adapter,
      jwks,
      cookies: { keys: keys.cookieKeys },
      findAccount: async (_ctx: unknown, id: string) =>
        (await this.accounts.find(id)) ? { accountId: id, claims: () => ({ sub: id }) } : undefined,
      scopes: ['openid', 'offline_access', ...this.allowedScopes()],
      pkce: { required: () => true },
      interactions: {
        url: (_ctx: unknown, interaction: { uid: string }) => `${options.path}/interaction/${interaction.uid}`,
      },
      issueRefreshToken: async (_ctx: unknown, client: ProviderClient) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: options.accessTokenTtlSec,
        AuthorizationCode: 60,
        ClientCredentials: options.accessTokenTtlSec,
        IdToken: options.accessTokenTtlSec,
        Interaction: UPSTREAM_SIGN_IN_TTL_SEC,
        RefreshToken: options.refreshTokenTtlSec,
        Grant: options.refreshTokenTtlSec,
        Session: options.refreshTokenTtlSec,
      },
      extraTokenClaims: async (_ctx: unknown, token: { kind: string; accountId?: string }) => {
        if (token.kind !== 'AccessToken' || !token.accountId) return undefined;
        const account = (await this.accounts.find(token.accountId)) as McpUpstreamPrincipal | undefined;
        return account ? { name: account.label, roles: account.roles ?? [] } : undefined;
      },
      renderError: async (ctx: { type: string; body: unknown }, out: Record<string, string>) => {
        ctx.type = 'json';
        ctx.body = { error: out.error, error_description: out.error_description };
      },
      ...(options.allowLoopbackHttp ? { fetch: loopbackFetch } : {}),
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        clientIdMetadataDocument: { enabled: options.clientIdMetadataDocuments !== false, ack: 'draft-02' },
        resourceIndicators: {
          enabled: true,
          defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string[]) => {
            if (oneOf) return oneOf;
            const resources = this.resources();
            return resources.length === 1 ? resources[0] : undefined;
          },
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
            if (!this.resources().includes(indicator))
              throw new errors.InvalidTarget(`this authorization server issues no tokens for ${indicator}`);
            return {
              scope: this.allowedScopes().join(' '),
              audience: indicator,
              accessTokenTTL: options.accessTokenTtlSec,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'RS256', kid: signer } },
            };
          },
        },
      },
    });
    provider.proxy = options.trustProxy === true;
    provider.on('server_error', (_ctx: unknown, error: Error) =>
      this.logger.error(`Authorization server error: ${error.message}`),
    );
    this.provider = provider;
    this.callback = provider.callback();
  }

  /** The resources tokens may be issued for: the mounts whose metadata names this issuer. */
  private resources(): string[] {
    return this.mounts
      .all()
      .filter((oauth) => oauth.document.authorization_servers.includes(this.options.issuer))
      .map((oauth) => oauth.resource);
  }

  /** The scopes granted without asking: the option, else the mounts' published scopes. */
  private allowedScopes(): string[] {
    if (this.options.scopes) return this.options.scopes;
    return [...new Set(this.mounts.all().flatMap((oauth) => oauth.document.scopes_supported ?? []))];
  }

  /** Serves the issuer's path and the RFC 8414 well-known path on the app's HTTP server. */
  private install(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) return;
    const type = adapter.getType();
    const path = this.options.path;
    const wellKnown = `/.well-known/oauth-authorization-server${path}`;
    const ours = (url: string): boolean => {
      const [pathname] = url.split('?');
      return pathname === wellKnown || pathname === path || pathname.startsWith(`${path}/`);
    };
    const route = (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, url: string): boolean => {
      if (!ours(url)) return false;
      const [pathname] = url.split('?');
      if (pathname === wellKnown) {
        req.originalUrl = `${path}/.well-known/openid-configuration`;
        req.url = '/.well-known/openid-configuration';
      } else if (pathname === path || pathname.startsWith(`${path}/`)) {
        req.originalUrl = url;
        req.url = url.slice(path.length) || '/';
      } else {
        return false;
      }
      this.handle(req, res);
      return true;
    };
    if (type === 'express') {
      const app = adapter.getInstance<{ use(handler: unknown): unknown; router?: { stack: unknown[] } }>();
      app.use((req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: () => void) => {
        if (!route(req, res, req.originalUrl ?? req.url ?? '/')) next();
      });
      // First in the stack, ahead of the body parsers: oidc-provider reads its requests' bodies itself.
      const stack = app.router?.stack;
      if (stack) stack.unshift(stack.pop());
    } else if (type === 'fastify') {
      const app = adapter.getInstance<{
        addHook(
          name: 'onRequest',
          hook: (
            request: { raw: IncomingMessage },
            reply: { raw: ServerResponse; hijack(): void },
            done: () => void,
          ) => void,
        ): unknown;
      }>();
      app.addHook('onRequest', (request, reply, done) => {
        const raw = request.raw;
        if (!raw.url || !ours(raw.url)) return done();
        // oidc-provider answers on the raw response and reads the raw body itself.
        reply.hijack();
        route(raw, reply.raw, raw.url);
      });
    } else {
      throw new McpConfigurationError(
        `McpAuthorizationServerModule runs on the Express or Fastify adapter of Nest, not "${type}"`,
      );
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const work = url.startsWith('/interaction/')
      ? this.interaction(req, res)
      : url.startsWith('/upstream/callback')
        ? this.upstreamCallback(req, res)
        : Promise.resolve(this.callback!(req, res));
    work.catch((error: unknown) => this.fail(res, error));
  }

  private fail(res: ServerResponse, error: unknown): void {
    const name = (error as { name?: string }).name;
    const oauth = error as { statusCode?: number; error?: string; error_description?: string; expose?: boolean };
    if (oauth.expose && oauth.error) {
      return sendError(res, oauth.statusCode ?? 400, oauth.error, oauth.error_description ?? oauth.error);
    }
    if (name === 'McpAuthorizationServerError') {
      this.logger.warn(`Upstream identity provider: ${(error as Error).message}`);
      return sendError(res, 503, 'temporarily_unavailable', 'The identity provider cannot be reached');
    }
    this.logger.error(`Authorization server failure: ${(error as Error).message}`);
    sendError(res, 500, 'server_error', 'The authorization server failed');
  }

  /**
   * The login and consent steps oidc-provider asks for: a login sends the user to the upstream
   * provider; consent is given at once for the scopes asked for within the allow-list (first-party).
   */
  private async interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const provider = this.provider!;
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const transaction = newTransaction(details.uid);
      const { state, codeChallenge: _challenge, ...kept } = transaction;
      await this.upstreamSignIns.upsert(state, { ...kept }, UPSTREAM_SIGN_IN_TTL_SEC);
      return redirect(res, await this.upstream.authorizationUrl(transaction));
    }
    const accountId = details.session?.accountId;
    if (details.prompt.name !== 'consent' || !accountId) {
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: `Unsupported prompt ${details.prompt.name}` },
        { mergeWithLastSubmission: false },
      ));
    }
    const account = (await this.accounts.find(accountId)) as McpUpstreamPrincipal | undefined;
    const allowed = new Set(this.allowedScopes().filter((scope) => !account?.scopes || account.scopes.includes(scope)));
    const missing = details.prompt.details;
    const requested = Object.entries(missing.missingResourceScopes ?? {});
    const denied = [...new Set(requested.flatMap(([, scopes]) => scopes.filter((scope) => !allowed.has(scope))))];
    if (denied.length > 0) {
      // oidc-provider asks again for any scope left out of the grant: refuse instead of looping.
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: `Not granted to this user: ${denied.join(' ')}` },
        { mergeWithLastSubmission: false },
      ));
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: details.params.client_id });
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of requested) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /**
   * The host's principal for the upstream user; a mapping that throws, or returns no key, refuses
   * the sign-in (`access_denied`; the reason goes to the log, not to the client).
   */
  private async principalOf(claims: Record<string, unknown>, issuer: string): Promise<McpUpstreamPrincipal> {
    let principal: McpUpstreamPrincipal | undefined;
    try {
      principal = await (this.options.principal ?? defaultUpstreamPrincipal)(claims, issuer);
    } catch (error) {
      this.logger.warn(`The principal mapping refused a user of ${issuer}: ${(error as Error).message}`);
    }
    if (!principal || typeof principal.key !== 'string' || principal.key === '')
      throw new McpUpstreamSignInError('access_denied', 'The user is not allowed here');
    return principal;
  }

  /** The user back from the upstream provider: the sign-in is checked, the principal mapped and stored. */
  private async upstreamCallback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://callback').searchParams;
    const state = query.get('state');
    const stored = state ? ((await this.upstreamSignIns.find(state)) as UpstreamTransaction | undefined) : undefined;
    if (!state || !stored) return sendError(res, 400, 'invalid_request', 'Unknown or expired sign-in (state)');
    await this.upstreamSignIns.destroy(state);
    const interaction = await this.provider!.Interaction.find(stored.uid);
    if (!interaction) return sendError(res, 400, 'invalid_request', 'The authorization request expired; start again');
    let result: Record<string, unknown>;
    const upstreamError = query.get('error');
    const code = query.get('code');
    if (upstreamError || !code) {
      result = {
        error: upstreamError === 'access_denied' ? 'access_denied' : 'server_error',
        error_description: 'The identity provider did not sign the user in',
      };
    } else {
      try {
        const user = await this.upstream.finish(code, stored);
        const principal = await this.principalOf(user.claims, user.issuer);
        await this.accounts.upsert(
          principal.key,
          {
            key: principal.key,
            label: principal.label || principal.key,
            ...(principal.scopes ? { scopes: principal.scopes } : {}),
            roles: principal.roles ?? [],
          },
          this.options.refreshTokenTtlSec,
        );
        result = { login: { accountId: principal.key } };
      } catch (error) {
        if (!(error instanceof McpUpstreamSignInError)) throw error;
        this.logger.warn(`Upstream sign-in refused: ${error.message}`);
        result = { error: error.code, error_description: error.message };
      }
    }
    interaction.result = result;
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    redirect(res, interaction.returnTo);
  }
}

/**
 * oidc-provider's outgoing requests (Client ID Metadata Documents) in development and tests:
 * an `https://127.0.0.1` document is fetched over plain http, and loopback is allowed.
 */
async function loopbackFetch(url: string | URL, options: RequestInit & { dispatcher?: unknown }): Promise<Response> {
  const target = new URL(url);
  if (target.protocol === 'https:' && /^(127\.\d+\.\d+\.\d+|localhost)$/.test(target.hostname))
    target.protocol = 'http:';
  const { dispatcher: _dispatcher, ...rest } = options;
  return fetch(target, rest);
}

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
import { requireOptionalPeer } from '../optional-peer';
import { McpProtectedResourceMounts } from '../server/oauth/protected-resource-mounts';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../server/oauth/authorization-server-metadata';
import type {
  McpAuthorizationServerModuleOptions,
  McpResolvedAuthorizationServerOptions,
} from './authorization-server.options';
import {
  MCP_AUTHORIZATION_SERVER_OPTIONS,
  MCP_AUTHORIZATION_SERVER_DATA_SOURCE,
} from './authorization-server.constants';
import { loadProviderKeys, providerJwks, rotatedKeys, saveProviderKeys, type ProviderKeys } from './provider-keys';
import type { NodeHandler, OidcProvider, OidcProviderPackage, ProviderClient } from './oidc-provider.interface';
import { TypeOrmProviderAdapter } from './provider-record.store';
import { serveOnHttpServer, sendError } from './provider-http';
import { UPSTREAM_SIGN_IN_TTL_SEC, UpstreamInteractions } from './upstream-interactions';
import { upstreamSignIn } from './upstream-sign-in';

/** Adapter models of the module's own records, beside oidc-provider's. */
const UPSTREAM_MODEL = 'McpUpstreamSignIn';
const ACCOUNT_MODEL = 'McpAccount';

/** How often a replica deletes expired rows and looks at the shared keys (they may have rotated). */
const MAINTENANCE_MS = 60_000;

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
  private readonly Adapter: new (model: string) => TypeOrmProviderAdapter;
  private readonly accounts: TypeOrmProviderAdapter;
  private readonly interactions: UpstreamInteractions;

  /** @internal Built by Nest from the module's options. */
  constructor(
    @Inject(MCP_AUTHORIZATION_SERVER_OPTIONS) private readonly options: McpResolvedAuthorizationServerOptions,
    @Inject(MCP_AUTHORIZATION_SERVER_DATA_SOURCE) private readonly dataSource: DataSource,
    private readonly mounts: McpProtectedResourceMounts,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    const upstream = upstreamSignIn(options.upstream, this.upstreamRedirectUri, {
      timeoutMs: options.upstreamTimeoutMs,
      maxBytes: DEFAULT_MAX_RESPONSE_BYTES,
    });
    this.Adapter = TypeOrmProviderAdapter.forDataSource(dataSource);
    this.accounts = new this.Adapter(ACCOUNT_MODEL);
    this.interactions = new UpstreamInteractions(
      upstream,
      new this.Adapter(UPSTREAM_MODEL),
      this.accounts,
      options.principal,
      () => this.allowedScopes(),
      options.refreshTokenTtlSec,
      this.logger,
    );
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
    this.keys = await loadProviderKeys(this.dataSource, this.options.cipher, Date.now());
    serveOnHttpServer(this.adapterHost, this.options.path, (req, res) => this.handle(req, res));
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
   * time (see `keyRotationMs`), or takes the keys another replica rotated. Runs on a timer; a
   * host or a test may call it.
   */
  async rotateKeys(nowMs = Date.now()): Promise<void> {
    const cipher = this.options.cipher;
    const current = await loadProviderKeys(this.dataSource, cipher, nowMs);
    let next = current;
    if (this.options.keyRotationMs > 0) {
      const rotated = await rotatedKeys(
        current.keys,
        nowMs,
        this.options.keyRotationMs,
        this.options.accessTokenTtlSec * 1000,
      );
      // Read back either way: the row holds what won (ours, or another replica's).
      if (rotated) {
        await saveProviderKeys(this.dataSource, cipher, current.text, rotated);
        next = await loadProviderKeys(this.dataSource, cipher, nowMs);
      }
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
      // OAuth 2.1, which MCP authorization builds on, has no implicit grant: only the code flow is
      // offered, and a registration asking for another response type is refused.
      responseTypes: ['code'],
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
        const account = (await this.accounts.find(token.accountId)) as
          McpAuthorizationServerModuleOptions.Principal | undefined;
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
        clientIdMetadataDocument: { enabled: options.clientIdMetadataDocuments, ack: 'draft-02' },
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
    provider.proxy = options.trustProxy;
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const provider = this.provider!;
    const work = url.startsWith('/interaction/')
      ? this.interactions.interaction(provider, req, res)
      : url.startsWith('/upstream/callback')
        ? this.interactions.callback(provider, req, res)
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

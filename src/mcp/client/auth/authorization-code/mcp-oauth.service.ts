import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { McpUnknownServerError } from '../../../errors/mcp-client-call.errors';
import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import type { McpOAuthAuthorization } from '../../../persistence/entities/oauth-authorization.entity';
import type { McpOAuthGrant } from '../../../persistence/entities/oauth-grant.entity';
import { TypeOrmOAuthClientStore } from '../../../persistence/typeorm/typeorm-oauth-client.store';
import { TypeOrmOAuthGrantStore } from '../../../persistence/typeorm/typeorm-oauth-grant.store';
import type { McpResolvedClientOptions } from '../../config/client-options-resolver';
import { MCP_CLIENT_OPTIONS } from '../../mcp-client.constants';
import { isSecureOrLoopback } from '../authorization-server-trust';
import type { McpAuthChallenge, McpAuthTarget } from '../mcp-client-auth.interface';
import { McpAuthorizationRequiredError, McpOAuthClientError } from '../oauth-client.errors';
import { tokenlessChallenge, type OAuthDiscovery } from '../oauth-discovery';
import { AuthorizationCodeAuth, type AuthorizationCodeEngine } from './authorization-code.auth';
import { McpOAuthClientRegistrar } from './client-registration';
import { McpOAuthCallbackError } from './oauth-callback.errors';
import { McpGrantSealer } from './grant-sealer';
import { newAuthorizationSecrets, stateHash } from './pkce';
import { requestTokens, TokenEndpointRefusal, type IssuedTokens } from './token-endpoint-request';

/** Longest a process holds the refresh lease of a grant; others wait for its tokens until then. */
const LEASE_MS = 15_000;
const WAIT_STEP_MS = 50;

/** What the callback of an authorization the app started gives back. */
export interface McpCompletedAuthorization {
  /** The configured server the user authorized. */
  server: string;
  /** The scope key (user) the grant belongs to. */
  scopeKey: string;
  /** Where the app asked to send the user afterwards (`redirectAfter` of `authorizationUrl`), or null. */
  redirectAfter: string | null;
}

/** The query parameters the authorization server sends the user back with. */
export interface McpAuthorizationCallbackQuery {
  /** The authorization code. */
  code?: unknown;
  /** The `state` the authorization URL carried. */
  state?: unknown;
  /** The authorization server's refusal (`access_denied`...). */
  error?: unknown;
  /** Its explanation. */
  error_description?: unknown;
  /** RFC 9207: the issuer that answers. */
  iss?: unknown;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * User-delegated OAuth of the client (servers whose `auth` is `authorizationCode({...})`): the
 * authorization URL to send a user to, the completion of the callback, and the grants behind
 * every call, sealed in the database and refreshed one process at a time.
 */
@Injectable()
export class McpOAuthService implements OnModuleInit, AuthorizationCodeEngine {
  private sealer: McpGrantSealer | null = null;
  private registrar: McpOAuthClientRegistrar | null = null;
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
    @Optional() private readonly store?: TypeOrmOAuthGrantStore,
    @Optional() private readonly clients?: TypeOrmOAuthClientStore,
  ) {}

  /**
   * Attaches itself to every `authorizationCode` provider, after checking what they need.
   * @throws McpConfigurationError without `oauth.encryptionKeys`, `oauth.redirectUri` or a database
   */
  onModuleInit(): void {
    const providers: AuthorizationCodeAuth[] = [];
    for (const [name, config] of Object.entries(this.options.servers)) {
      const { auth, scope } = config as { auth?: unknown; scope?: string };
      if (!(auth instanceof AuthorizationCodeAuth)) continue;
      if (scope !== 'principal')
        throw new McpConfigurationError(
          `McpClientModule: server "${name}" uses authorizationCode(), whose tokens are per user: set scope: 'principal' on it, and pass { scopeKey } (the user id) with every call`,
        );
      providers.push(auth);
    }
    if (providers.length === 0) return;
    const { redirectUri, encryptionKeys } = this.options.oauth;
    this.sealer = new McpGrantSealer(encryptionKeys);
    if (!redirectUri || !URL.canParse(redirectUri) || !isSecureOrLoopback(new URL(redirectUri)))
      throw new McpConfigurationError(
        'McpClientModule: a server uses authorizationCode(): set "oauth.redirectUri" to the absolute https URL of the callback route (oauthCallbackPath) as browsers reach it (http only on a loopback host)',
      );
    if (!this.store)
      throw new McpConfigurationError(
        'McpClientModule: a server uses authorizationCode(), whose grants live in the database: give the app a TypeORM connection with MCP_ENTITIES (and keep the TypeORM stores)',
      );
    this.registrar = new McpOAuthClientRegistrar(this.clients, this.sealer, redirectUri, this.options.oauth.clientName);
    for (const auth of providers) auth.attach(this);
  }

  /**
   * The URL to send a user to so that they authorize the client for `server`; the grant will
   * belong to `scopeKey` (the `scopeKey` of their calls). The pending authorization (PKCE
   * verifier, state, resource, scopes) is kept in the database, one-time and expiring, so the
   * callback completes it on any replica.
   * @param options.redirectAfter where the callback route sends the user once done: a path, or a URL on the origin of `oauth.redirectUri`
   * @throws McpUnknownServerError for an unknown server; McpOAuthClientError when the server does not use authorizationCode, or discovery fails
   */
  async authorizationUrl(server: string, scopeKey: string, options: { redirectAfter?: string } = {}): Promise<string> {
    const { auth, url } = this.entry(server);
    const { sealer, store } = this.parts();
    const redirectUri = this.options.oauth.redirectUri as string;
    const redirectAfter = options.redirectAfter ?? null;
    if (redirectAfter !== null && !this.allowedRedirect(redirectAfter))
      throw new McpOAuthClientError(
        `redirectAfter ${JSON.stringify(redirectAfter.slice(0, 200))} is neither a path nor a URL on the origin of oauth.redirectUri`,
      );
    const discovery = await auth.discover(url);
    const endpoint = discovery.user?.authorizationEndpoint ?? null;
    if (!endpoint || !URL.canParse(endpoint) || !isSecureOrLoopback(new URL(endpoint)))
      throw new McpOAuthClientError(
        `The authorization server ${discovery.issuer} announces no usable authorization_endpoint`,
      );
    if (!discovery.user?.pkceMethods.includes('S256'))
      throw new McpOAuthClientError(
        `The authorization server ${discovery.issuer} does not announce PKCE with S256 (code_challenge_methods_supported); the client does not authorize without it`,
      );
    const client = await this.client().client(auth, discovery);
    const scope = await this.scopeFor(auth, discovery, await store.find(server, scopeKey), url);
    const secrets = newAuthorizationSecrets();
    const hash = stateHash(secrets.state);
    const now = Date.now();
    const pending: McpOAuthAuthorization = {
      stateHash: hash,
      server,
      scopeKey,
      issuer: discovery.issuer,
      clientId: client.clientId,
      resource: discovery.resource,
      scope,
      redirectUri,
      codeVerifier: sealer.sealVerifier(hash, secrets.verifier),
      redirectAfter,
      createdAt: new Date(now),
      expiresAt: new Date(now + this.options.oauth.authorizationTtlMs),
    };
    await store.begin(pending);
    const target = new URL(endpoint);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: redirectUri,
      state: secrets.state,
      code_challenge: secrets.challenge,
      code_challenge_method: 'S256',
      resource: discovery.resource,
      ...(scope ? { scope } : {}),
    };
    for (const [key, value] of Object.entries(params)) target.searchParams.set(key, value);
    return target.href;
  }

  /**
   * Completes an authorization from the query the authorization server sent the user back
   * with: exchanges the code (with the PKCE verifier) and keeps the tokens. The callback route
   * calls it; a host serving its own route may too.
   * @throws McpOAuthCallbackError for an unknown, used or expired state, a refusal, an issuer mix-up or a refused exchange
   */
  async completeAuthorization(query: McpAuthorizationCallbackQuery): Promise<McpCompletedAuthorization> {
    const { sealer, store } = this.parts();
    const state = text(query.state);
    if (state === null)
      throw new McpOAuthCallbackError('The callback has no "state": it answers no authorization of this app');
    const pending = await store.take(stateHash(state));
    if (!pending)
      throw new McpOAuthCallbackError(
        'The callback answers no pending authorization (unknown, already completed or expired): start again',
      );
    const refusal = text(query.error);
    if (refusal !== null) {
      const description = text(query.error_description);
      throw new McpOAuthCallbackError(
        `The authorization server refused: ${refusal.slice(0, 100)}${description ? ` (${description.slice(0, 300)})` : ''}`,
      );
    }
    if (query.iss !== undefined && query.iss !== pending.issuer)
      throw new McpOAuthCallbackError(
        `The callback names the issuer ${JSON.stringify(typeof query.iss === 'string' ? query.iss.slice(0, 200) : query.iss)}, not ${pending.issuer} the user was sent to`,
      );
    const code = text(query.code);
    if (code === null) throw new McpOAuthCallbackError('The callback has no "code"');
    const { auth, url } = this.entry(pending.server);
    const discovery = await auth.discover(url);
    if (query.iss === undefined && discovery.user?.issParameterSupported)
      throw new McpOAuthCallbackError(
        `The authorization server ${pending.issuer} announces the iss parameter (RFC 9207), and the callback has none: refused as a possible mix-up`,
      );
    if (discovery.issuer !== pending.issuer || discovery.resource !== pending.resource)
      throw new McpOAuthCallbackError(
        `MCP server "${pending.server}" names another authorization server or resource than when the authorization started: start again`,
      );
    const verifier = sealer.openVerifier(pending.stateHash, pending.codeVerifier);
    if (verifier === null)
      throw new McpOAuthCallbackError('The pending authorization does not open with the configured keys: start again');
    const client = await this.client().issuedTo(auth, discovery, pending.clientId);
    let tokens: IssuedTokens;
    try {
      tokens = await requestTokens(
        discovery,
        client,
        { grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri, code_verifier: verifier },
        auth.bounds,
      );
    } catch (error) {
      throw new McpOAuthCallbackError((error as Error).message);
    }
    await store.save(pending.server, pending.scopeKey, {
      ...sealer.sealTokens(pending.server, pending.scopeKey, tokens, null),
      issuer: discovery.issuer,
      clientId: client.clientId,
      resource: discovery.resource,
      scope: tokens.scope ?? pending.scope,
    });
    return { server: pending.server, scopeKey: pending.scopeKey, redirectAfter: pending.redirectAfter };
  }

  /** The access token of a call, refreshed when it expired (one refresh per process and grant at a time). */
  token(auth: AuthorizationCodeAuth, target: Required<McpAuthTarget>): Promise<string> {
    const key = `${target.server}\0${target.scopeKey}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.currentToken(auth, target).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** A server refused a token: a 401 expires it (the next call refreshes), a 403 `insufficient_scope` asks the user for more. */
  async refused(
    auth: AuthorizationCodeAuth,
    target: Required<McpAuthTarget>,
    token: string,
    challenge?: McpAuthChallenge,
  ): Promise<void> {
    const { sealer, store } = this.parts();
    const grant = await store.find(target.server, target.scopeKey);
    if (!grant) return;
    if (challenge?.status === 403 && challenge.error === 'insufficient_scope') {
      const scopes = [...grant.scope.split(' '), ...(challenge.scope ?? '').split(' ')].filter(Boolean);
      await store.want(grant, [...new Set(scopes)].join(' ').slice(0, 4096));
      throw new McpAuthorizationRequiredError(target.server, target.scopeKey, 'insufficient_scope');
    }
    if (sealer.open(grant, 'access') === token) {
      // The server may have moved to another authorization server: the refresh discovers again.
      auth.forget(target.url);
      await store.expire(grant);
    }
  }

  private async currentToken(auth: AuthorizationCodeAuth, target: Required<McpAuthTarget>): Promise<string> {
    const { sealer, store } = this.parts();
    const deadline = Date.now() + LEASE_MS;
    for (;;) {
      const grant = await store.find(target.server, target.scopeKey);
      if (!grant) throw new McpAuthorizationRequiredError(target.server, target.scopeKey, 'none');
      // A grant whose refresh token was refused keeps its row, emptied, so retries say why.
      if (grant.accessToken === '') throw new McpAuthorizationRequiredError(target.server, target.scopeKey, 'revoked');
      const access = sealer.open(grant, 'access');
      if (access !== null && grant.expiresAt.getTime() > Date.now()) return access;
      const refresh = sealer.open(grant, 'refresh');
      if (refresh === null) throw new McpAuthorizationRequiredError(target.server, target.scopeKey, 'none');
      if (await store.lease(grant, new Date(Date.now() + LEASE_MS))) return this.refresh(auth, target, grant, refresh);
      // Another process refreshes: its tokens appear as a newer version of the row.
      if (Date.now() > deadline)
        throw new McpOAuthClientError(
          `Another process took the refresh of the grant of MCP server "${target.server}" and did not finish it`,
        );
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  private async refresh(
    auth: AuthorizationCodeAuth,
    target: Required<McpAuthTarget>,
    grant: McpOAuthGrant,
    refreshToken: string,
  ): Promise<string> {
    const { sealer, store } = this.parts();
    let tokens: IssuedTokens;
    try {
      const discovery = await auth.discover(target.url);
      if (discovery.issuer !== grant.issuer)
        throw new McpAuthorizationRequiredError(
          target.server,
          target.scopeKey,
          'none',
          `MCP server "${target.server}" now names the authorization server ${discovery.issuer}, not ${grant.issuer} that issued the grant: the user must authorize there; send the user to McpOAuthService.authorizationUrl(server, scopeKey)`,
        );
      tokens = await requestTokens(
        discovery,
        await this.client().issuedTo(auth, discovery, grant.clientId),
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        auth.bounds,
      );
    } catch (error) {
      if (error instanceof TokenEndpointRefusal && error.error === 'invalid_grant') {
        await store.refreshed(grant, { accessToken: '', refreshToken: null, expiresAt: new Date(0) });
        throw new McpAuthorizationRequiredError(target.server, target.scopeKey, 'revoked');
      }
      await store.refreshed(grant, {});
      throw error;
    }
    // The lease holder alone writes: the row is at the version it leased.
    await store.refreshed(grant, {
      ...sealer.sealTokens(target.server, target.scopeKey, tokens, grant.refreshToken),
      ...(tokens.scope !== null ? { scope: tokens.scope } : {}),
    });
    return tokens.accessToken;
  }

  /** Challenged and configured scopes; else the resource's `scopes_supported`; else none. */
  private async scopeFor(
    auth: AuthorizationCodeAuth,
    discovery: OAuthDiscovery,
    grant: McpOAuthGrant | null,
    endpoint: URL,
  ): Promise<string> {
    const asked = [...(grant?.wantedScope ?? '').split(' '), ...(auth.options.scope ?? '').split(' ')].filter(Boolean);
    if (asked.length > 0) return [...new Set(asked)].join(' ');
    // The MCP authorization spec's order: the scope of the server's 401 challenge, then its PRM's.
    const challenged = (await tokenlessChallenge(endpoint, auth.bounds.timeoutMs))?.scope;
    if (challenged) return challenged.slice(0, 4096);
    return (discovery.user?.resourceScopes ?? []).join(' ');
  }

  private client(): McpOAuthClientRegistrar {
    return this.registrar as McpOAuthClientRegistrar;
  }

  private entry(server: string): { auth: AuthorizationCodeAuth; url: URL } {
    const config = this.options.servers[server] as { auth?: unknown; url?: string | URL } | undefined;
    if (!config) throw new McpUnknownServerError(server, Object.keys(this.options.servers));
    if (!(config.auth instanceof AuthorizationCodeAuth) || config.url === undefined)
      throw new McpOAuthClientError(`MCP server "${server}" does not use authorizationCode() as its auth`);
    return { auth: config.auth, url: new URL(String(config.url)) };
  }

  private allowedRedirect(target: string): boolean {
    if (target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\')) return true;
    return URL.canParse(target) && new URL(target).origin === new URL(this.options.oauth.redirectUri as string).origin;
  }

  private parts(): { sealer: McpGrantSealer; store: TypeOrmOAuthGrantStore } {
    if (!this.sealer || !this.store) throw new McpOAuthClientError('No server of this client uses authorizationCode()');
    return { sealer: this.sealer, store: this.store };
  }
}

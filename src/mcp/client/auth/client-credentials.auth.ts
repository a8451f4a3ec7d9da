import { createHash, randomUUID, type JsonWebKey, type webcrypto } from 'node:crypto';
import type * as Jose from 'jose';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidClientCredentialsLimitMessage } from '../../mcp.messages';
import { requireOptionalPeer } from '../../optional-peer';
import type { McpAuthChallenge, McpAuthTarget, McpClientAuth, McpTokenStore } from './mcp-client-auth.interface';
import { pinnedTokenEndpoint, trustedIssuers } from './authorization-server-trust';
import { McpOAuthClientError, McpOAuthScopeLimitError } from './oauth-client.errors';
import { discoverOAuth, metadataUrlAllowed, type OAuthDiscovery, type OAuthDiscoveryPolicy } from './oauth-discovery';
import { jsonObject, oauthFetch } from './oauth-fetch';

/** Most scopes asked for at once, the configured ones and those 403 challenges added. */
export const MAX_SCOPES = 64;
/** Longest `scope` asked for, in characters. */
export const MAX_SCOPE_LENGTH = 2048;
/** RFC 6749 section 3.3: a scope token is printable ASCII without space, `"` or `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** What one endpoint taught us: where to get tokens, and the scopes its challenges asked for. */
interface EndpointState {
  discovery: Promise<OAuthDiscovery>;
  metadataUrl: string | null;
  extraScopes: Set<string>;
}

/** Longest a worker holds the fetch lock; others wait for its token until then. */
const LOCK_MS = 15_000;
const WAIT_STEP_MS = 50;
/** Assumed lifetime when the token response has no `expires_in`. */
const DEFAULT_LIFETIME_SEC = 300;

/** A token is dropped this long before it expires: a tenth of its lifetime, at most a minute. */
export function cacheTtlMs(expiresInSec: number): number {
  const lifetime = expiresInSec * 1000;
  return lifetime - Math.min(60_000, lifetime / 10);
}

/** The `Authorization: Basic` value of a client id and secret (RFC 6749 section 2.3.1). */
export function basicCredentials(clientId: string, secret: string): string {
  // RFC 6749 section 2.3.1: both parts form-encoded before base64.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/**
 * OAuth 2.1 client credentials for an MCP server: discovers the token endpoint from the server's
 * Protected Resource Metadata (RFC 9728) and its authorization server's metadata (RFC 8414 or
 * OpenID Connect), asks for a token for the server's `resource` (RFC 8707), and keeps it in the
 * client's token store (Redis with the Bull queue, so workers share it) until shortly before it
 * expires. After a 403 `insufficient_scope` the challenged scopes are asked for too.
 */
class ClientCredentialsAuth implements McpClientAuth {
  private readonly endpoints = new Map<string, EndpointState>();
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly policy: OAuthDiscoveryPolicy;

  constructor(
    private readonly options: clientCredentials.Options,
    issuers: string[],
    tokenEndpoint: string | undefined,
  ) {
    this.policy = {
      timeoutMs: options.timeoutMs ?? 10_000,
      maxBytes: options.maxResponseBytes ?? 65_536,
      trustedIssuers: issuers,
      tokenEndpoint,
    };
  }

  async getToken(target: McpAuthTarget, store: McpTokenStore): Promise<string> {
    const state = this.state(target);
    const discovery = await state.discovery;
    const scope = this.scope(state);
    const key = this.cacheKey(target, discovery, scope);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.sharedToken(key, store, discovery, scope).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  async invalidate(
    target: McpAuthTarget,
    store: McpTokenStore,
    refusedToken?: string,
    challenge?: McpAuthChallenge,
  ): Promise<void> {
    let state = this.state(target);
    // Metadata named on another origin is not read: the discovery already made stays.
    const named = challenge?.resourceMetadata;
    if (named && named !== state.metadataUrl && metadataUrlAllowed(named, target.url))
      state = this.rediscover(target, named);
    if (challenge?.status === 403 && challenge.error === 'insufficient_scope' && challenge.scope) {
      // The old token stays valid for what it covers; the next one also carries what was missing.
      const added = this.challengedScopes(state, challenge.scope);
      for (const scope of added) state.extraScopes.add(scope);
      return;
    }
    if (!refusedToken) return;
    const discovery = await state.discovery.catch(() => null);
    if (discovery) await store.delete(this.cacheKey(target, discovery, this.scope(state)), refusedToken);
  }

  /**
   * The scopes a challenge adds, once they are known to keep the union within bounds.
   * @throws McpOAuthScopeLimitError when a scope is malformed or the union would be too large
   */
  private challengedScopes(state: EndpointState, challenged: string): string[] {
    const refuse = (why: string) =>
      new McpOAuthScopeLimitError(
        `A 403 insufficient_scope challenge for client "${this.options.clientId}" was refused: ${why}`,
      );
    if (challenged.length > MAX_SCOPE_LENGTH) throw refuse(`its scope is longer than ${MAX_SCOPE_LENGTH} characters`);
    const added = challenged.split(' ').filter(Boolean);
    if (added.some((scope) => !SCOPE_TOKEN.test(scope)))
      throw refuse('its scope holds a character RFC 6749 does not allow');
    const union = new Set([...this.scope(state).split(' ').filter(Boolean), ...added]);
    const length = [...union].join(' ').length;
    if (union.size > MAX_SCOPES || length > MAX_SCOPE_LENGTH) {
      throw refuse(
        `it would make ${union.size} scopes of ${length} characters in all, more than ${MAX_SCOPES} scopes or ${MAX_SCOPE_LENGTH} characters`,
      );
    }
    return added;
  }

  private state(target: McpAuthTarget): EndpointState {
    return this.endpoints.get(target.url.href) ?? this.rediscover(target, null);
  }

  private rediscover(target: McpAuthTarget, metadataUrl: string | null): EndpointState {
    const previous = this.endpoints.get(target.url.href);
    const state: EndpointState = {
      discovery: discoverOAuth(target.url, metadataUrl, this.policy),
      metadataUrl,
      extraScopes: previous?.extraScopes ?? new Set(),
    };
    // A failed discovery is tried again on the next call, not remembered.
    state.discovery.catch(
      () => this.endpoints.get(target.url.href) === state && this.endpoints.delete(target.url.href),
    );
    this.endpoints.set(target.url.href, state);
    return state;
  }

  private scope(state: EndpointState): string {
    return [...new Set([...(this.options.scope ?? '').split(' ').filter(Boolean), ...state.extraScopes])].join(' ');
  }

  /** One key per token endpoint, client, scope and resource: the secret never is part of it. */
  private cacheKey(target: McpAuthTarget, discovery: OAuthDiscovery, scope: string): string {
    return createHash('sha256')
      .update(JSON.stringify([discovery.tokenEndpoint, this.options.clientId, scope, discovery.resource]))
      .digest('hex');
  }

  /** The stored token, or one fetched by whichever process takes the lock first. */
  private async sharedToken(
    key: string,
    store: McpTokenStore,
    discovery: OAuthDiscovery,
    scope: string,
  ): Promise<string> {
    const deadline = Date.now() + LOCK_MS;
    for (;;) {
      const cached = await store.get(key);
      if (cached) return cached;
      const locked = await store.lock(key, LOCK_MS);
      if (locked || Date.now() > deadline) {
        try {
          const again = locked ? await store.get(key) : null;
          if (again) return again;
          const { token, expiresIn } = await this.requestToken(discovery, scope);
          const ttl = cacheTtlMs(expiresIn);
          if (ttl > 0) await store.set(key, token, ttl);
          return token;
        } finally {
          if (locked) await store.unlock(key);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  private authMethod(discovery: OAuthDiscovery): clientCredentials.TokenEndpointAuthMethod {
    if (this.options.tokenEndpointAuthMethod) return this.options.tokenEndpointAuthMethod;
    if (this.options.privateKeyJwt) return 'private_key_jwt';
    const methods = discovery.authMethods;
    return methods.length > 0 && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')
      ? 'client_secret_post'
      : 'client_secret_basic';
  }

  private async requestToken(discovery: OAuthDiscovery, scope: string): Promise<{ token: string; expiresIn: number }> {
    const { clientId, clientSecret } = this.options;
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource: discovery.resource });
    if (scope) form.set('scope', scope);
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    };
    const method = this.authMethod(discovery);
    if (method === 'private_key_jwt') {
      form.set('client_id', clientId);
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', await this.clientAssertion(discovery.issuer));
    } else if (method === 'client_secret_post') {
      form.set('client_id', clientId);
      form.set('client_secret', clientSecret ?? '');
    } else {
      headers.Authorization = basicCredentials(clientId, clientSecret ?? '');
    }
    const where = `The token endpoint ${discovery.tokenEndpoint}`;
    const bounds = { timeoutMs: this.policy.timeoutMs, maxBytes: this.policy.maxBytes };
    const response = await oauthFetch(
      discovery.tokenEndpoint,
      { method: 'POST', headers, body: form.toString() },
      bounds,
      where,
    );
    // A body that is not a JSON object is described below by its status.
    const body = jsonObject(response.text) ?? {};
    const ok = response.status >= 200 && response.status < 300;
    if (!ok || typeof body.access_token !== 'string' || body.access_token === '') {
      // Only the error fields: a token in a malformed success body must not reach a message.
      const said =
        typeof body.error === 'string'
          ? `: ${body.error.slice(0, 100)}${typeof body.error_description === 'string' ? ` (${body.error_description.slice(0, 300)})` : ''}`
          : '';
      throw new McpOAuthClientError(`${where} refused client "${clientId}" (HTTP ${response.status})${said}`);
    }
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
      throw new McpOAuthClientError(
        `${where} issued a token of type ${JSON.stringify(body.token_type)}; only Bearer tokens are supported`,
      );
    }
    const expiresIn =
      typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SEC;
    return { token: body.access_token, expiresIn };
  }

  /**
   * RFC 7523 client assertion: iss and sub the client, one minute long, aud the issuer
   * identifier of the authorization server as one string (RFC 7523bis, which servers following
   * it insist on; the token endpoint URL is refused there).
   */
  private async clientAssertion(audience: string): Promise<string> {
    const { key, alg, kid } = this.options.privateKeyJwt as clientCredentials.PrivateKeyJwt;
    const jose = requireOptionalPeer<typeof Jose>('jose', 'clientCredentials({ privateKeyJwt })');
    const signingKey =
      typeof key === 'string'
        ? await jose.importPKCS8(key, alg)
        : 'kty' in key
          ? await jose.importJWK(key, alg)
          : (key as Jose.CryptoKey);
    // One clock reading for both claims: two readings can straddle a second and make the lifetime 61 s.
    const issuedAt = Math.floor(Date.now() / 1000);
    return new jose.SignJWT({})
      .setProtectedHeader({ alg, ...(kid ? { kid } : {}) })
      .setIssuer(this.options.clientId)
      .setSubject(this.options.clientId)
      .setAudience(audience)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + 60)
      .sign(signingKey);
  }
}

/**
 * Client credentials (OAuth 2.1) for an HTTP server: the token endpoint is discovered from the
 * server, tokens are fetched for the server's resource and shared through the client's token
 * store (Redis with the Bull queue), refreshed before expiry and after a 401.
 * @example
 * ```ts
 * search: {
 *   url: 'https://search.example.com/mcp',
 *   auth: clientCredentials({ clientId: 'agent', clientSecret: process.env.AGENT_SECRET!, authorizationServer: 'https://login.example.com', scope: 'mcp:tools' }),
 * }
 * ```
 * @throws TypeError when neither or both of `clientSecret` and `privateKeyJwt` are given
 * @throws McpConfigurationError without `authorizationServer` or `trustedAuthorizationServers`, with an issuer that is not an https URL, a `tokenEndpoint` that is not one or comes without `authorizationServer`, or a `timeoutMs` or `maxResponseBytes` that is not a positive integer
 */
export function clientCredentials(options: clientCredentials.Options): McpClientAuth {
  if (!options || typeof options.clientId !== 'string' || options.clientId === '')
    throw new TypeError('clientCredentials needs a clientId');
  if ((options.clientSecret === undefined) === (options.privateKeyJwt === undefined)) {
    throw new TypeError(
      `clientCredentials for "${options.clientId}" needs exactly one of clientSecret and privateKeyJwt`,
    );
  }
  if (
    options.tokenEndpointAuthMethod === 'private_key_jwt'
      ? !options.privateKeyJwt
      : options.tokenEndpointAuthMethod !== undefined && options.clientSecret === undefined
  ) {
    throw new TypeError(
      `clientCredentials for "${options.clientId}": tokenEndpointAuthMethod "${options.tokenEndpointAuthMethod}" needs ${options.tokenEndpointAuthMethod === 'private_key_jwt' ? 'privateKeyJwt' : 'clientSecret'}`,
    );
  }
  for (const [name, fallback] of [
    ['timeoutMs', '10000 ms'],
    ['maxResponseBytes', '65536 bytes'],
  ] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw new McpConfigurationError(invalidClientCredentialsLimitMessage(options.clientId, name, value, fallback));
  }
  const issuers = trustedIssuers(options);
  return new ClientCredentialsAuth({ ...options }, issuers, pinnedTokenEndpoint(options));
}

/** What `clientCredentials()` takes: `clientCredentials.Options`, with its `PrivateKeyJwt` and `TokenEndpointAuthMethod`. */
export declare namespace clientCredentials {
  /** How the client proves itself at the token endpoint (RFC 7591 names). */
  export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

  /** A key that signs `private_key_jwt` client assertions (RFC 7523). */
  export interface PrivateKeyJwt {
    /** The private key: a JWK, a PKCS#8 PEM string, or a `CryptoKey`. */
    key: JsonWebKey | string | webcrypto.CryptoKey;
    /** The JWS algorithm, e.g. `'RS256'` or `'ES256'`. */
    alg: string;
    /** The `kid` header, when the authorization server has several keys of the client. */
    kid?: string;
  }

  /** Settings of `clientCredentials`. */
  export interface Options {
    /** The client id registered at the authorization server. */
    clientId: string;
    /** The client secret (with `client_secret_basic` or `client_secret_post`). */
    clientSecret?: string;
    /** A key for `private_key_jwt` instead of a secret. */
    privateKeyJwt?: PrivateKeyJwt;
    /** The scopes to ask for, space-separated. @default none: the authorization server's default */
    scope?: string;
    /**
     * How to authenticate at the token endpoint.
     * @default 'private_key_jwt' with `privateKeyJwt`; else `'client_secret_basic'`, or
     * `'client_secret_post'` when the server announces only that
     */
    tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
    /**
     * The issuer the client is registered at (its issuer identifier, exactly as its metadata
     * states it): the client credentials are only ever sent to it, whatever a server announces.
     * The server's metadata must list it, the authorization server's metadata must state it as
     * `issuer`, and its token endpoint must be on its origin. https only (http on a loopback host).
     * Required unless `trustedAuthorizationServers` is given.
     * @default none: one of the two is required
     */
    authorizationServer?: string;
    /**
     * Instead of `authorizationServer`: several issuers the client is registered at under the same
     * credentials. The first of the server's `authorization_servers` that is listed here is used.
     * @default none: one of the two is required
     */
    trustedAuthorizationServers?: string[];
    /**
     * The token endpoint, for an authorization server whose endpoint is on another origin than its
     * issuer: the credentials go to this URL as configured. The issuer's metadata may announce this
     * same endpoint or none (an issuer without metadata is then usable too); one announcing another
     * endpoint fails with `McpUntrustedAuthorizationServerError`. https only (http on a loopback
     * host), no fragment; needs `authorizationServer`.
     * @default none: the `token_endpoint` of the issuer's metadata, which must be on the issuer's origin
     */
    tokenEndpoint?: string;
    /** Deadline of one request to the metadata or token endpoints, body included, in ms. @default 10_000 */
    timeoutMs?: number;
    /**
     * Largest body read from a metadata or token endpoint, in bytes: a larger one fails the
     * discovery or token request with `McpOAuthClientError`, the rest unread.
     * @default 65_536
     */
    maxResponseBytes?: number;
  }
}

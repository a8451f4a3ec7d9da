import { McpConfigurationError } from '../errors/mcp-configuration.errors';

/** What the host makes of the user an upstream identity provider signed in. */
export interface McpUpstreamPrincipal {
  /** The principal's key: the `sub` of its access tokens, what tools see as `ctx.principal.key`. */
  key: string;
  /** A human-readable name for the audit trail (the tokens' `name` claim). */
  label: string;
  /**
   * The scopes this user may be granted; a client gets the ones it asked for within these.
   * @default every scope of the allow-list
   */
  scopes?: string[];
  /** The user's roles (the tokens' `roles` claim, `ctx.principal.roles`). */
  roles?: string[];
}

/** Where users sign in: any OpenID Connect issuer (Keycloak, Entra ID, Google, Okta...). */
export interface McpOidcUpstream {
  /** OpenID Connect (the default). */
  kind?: 'oidc';
  /** The issuer URL; its discovery document gives the endpoints and keys. */
  issuer: string;
  /** The client id this authorization server has at the upstream provider. */
  clientId: string;
  /** Its client secret (sent with HTTP Basic authentication). */
  clientSecret: string;
  /**
   * The scopes asked of the upstream provider.
   * @default ['openid', 'profile', 'email']
   */
  scopes?: string[];
}

/** Where users sign in: GitHub's OAuth 2.0 (no ID token: the user is read from its API). */
export interface McpGitHubUpstream {
  /** GitHub. */
  kind: 'github';
  /** The OAuth app's client id. */
  clientId: string;
  /** The OAuth app's client secret. */
  clientSecret: string;
  /**
   * The scopes asked of GitHub.
   * @default ['read:user']
   */
  scopes?: string[];
  /**
   * GitHub's web origin (authorize and token endpoints), for GitHub Enterprise Server.
   * @default 'https://github.com'
   */
  webUrl?: string;
  /**
   * GitHub's API origin (`/user`), for GitHub Enterprise Server.
   * @default 'https://api.github.com'
   */
  apiUrl?: string;
}

/** The identity provider users are sent to sign in at. */
export type McpUpstreamIdentityProvider = McpOidcUpstream | McpGitHubUpstream;

/** Options of `McpAuthorizationServerModule.forRoot`. */
export interface McpAuthorizationServerOptions {
  /** The app's public base URL (scheme, host, port), e.g. `https://mcp.example.com`. */
  publicUrl: string;
  /**
   * Where the authorization server is served on the app: the issuer is `publicUrl` followed by it.
   * @default '/oauth'
   */
  path?: string;
  /** Where users sign in. */
  upstream: McpUpstreamIdentityProvider;
  /**
   * Maps the upstream user's claims (an OpenID Connect ID token's, or GitHub's `/user` answer with
   * `sub` its numeric id) to the principal.
   * @default key `<upstream issuer>#<sub>`, label the first of `name`, `preferred_username`, `email`, `login`, `sub`
   */
  principal?: (
    claims: Record<string, unknown>,
    upstreamIssuer: string,
  ) => McpUpstreamPrincipal | Promise<McpUpstreamPrincipal>;
  /**
   * The scopes granted without asking the user (first-party consent): a client gets those it asked
   * for within this list (and within the principal's `scopes`).
   * @default the `scopes_supported` of the mounts' Protected Resource Metadata
   */
  scopes?: string[];
  /**
   * Lifetime of an access token, in seconds.
   * @default 3600
   */
  accessTokenTtlSec?: number;
  /**
   * Lifetime of a refresh token, in seconds.
   * @default 1_209_600
   */
  refreshTokenTtlSec?: number;
  /**
   * Accepts https `client_id` URLs whose Client ID Metadata Document it fetches (bounded: size,
   * time, no redirect; special-use addresses refused).
   * @default true
   */
  clientIdMetadataDocuments?: boolean;
  /**
   * Development and tests only: fetches the metadata document of an `https://127.0.0.1` client id
   * over plain http (a TLS-terminating proxy stand-in). Never in production.
   * @default false
   */
  allowLoopbackHttp?: boolean;
  /**
   * Trusts `X-Forwarded-*` headers (the app runs behind a proxy).
   * @default false
   */
  trustProxy?: boolean;
  /**
   * How often the signing key is replaced, in seconds: the next key is published a whole access
   * token lifetime before it signs, and the old one stays published until its tokens expired.
   * 0: never.
   * @default 0
   */
  keyRotationSec?: number;
  /**
   * Deadline of each request to the upstream provider, body included.
   * @default 5000
   */
  upstreamTimeoutMs?: number;
}

/** The options checked and completed. */
export interface McpResolvedAuthorizationServerOptions extends McpAuthorizationServerOptions {
  /** The issuer identifier: `publicUrl` followed by `path`. */
  issuer: string;
  /** The path the server is mounted at (no trailing slash). */
  path: string;
  accessTokenTtlSec: number;
  refreshTokenTtlSec: number;
  keyRotationSec: number;
  upstreamTimeoutMs: number;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

function fail(problem: string): never {
  throw new McpConfigurationError(`McpAuthorizationServerModule: ${problem}`);
}

function checkUrl(name: string, value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    return fail(`${name} must be an absolute https URL (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname)))
    fail(`${name} must use https (http is accepted for localhost only; got "${String(value)}")`);
  return url;
}

function positive(name: string, value: number | undefined, fallback: number, zero = false): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < (zero ? 0 : 1))
    fail(`${name} must be an integer of ${zero ? 0 : 1} or more (got ${String(value)})`);
  return value;
}

/**
 * Checks the options and derives the issuer; fails at boot with a message naming the option.
 * @throws McpConfigurationError
 */
export function resolveAuthorizationServerOptions(
  options: McpAuthorizationServerOptions,
): McpResolvedAuthorizationServerOptions {
  if (typeof options !== 'object' || options === null) fail('options are required ({ publicUrl, upstream })');
  const base = checkUrl('publicUrl', options.publicUrl);
  if (base.search || base.hash) fail('publicUrl must have no query or fragment');
  const path = `/${(options.path ?? '/oauth').replace(/^\/+|\/+$/g, '')}`;
  if (path === '/') fail('path must not be empty: the authorization server needs a prefix of its own (e.g. "/oauth")');
  const upstream = options.upstream;
  if (typeof upstream !== 'object' || upstream === null)
    fail('upstream is required (an OpenID Connect issuer or GitHub)');
  if (!upstream.clientId || !upstream.clientSecret) fail('upstream.clientId and upstream.clientSecret are required');
  if (upstream.kind === 'github') {
    if (upstream.webUrl !== undefined) checkUrl('upstream.webUrl', upstream.webUrl);
    if (upstream.apiUrl !== undefined) checkUrl('upstream.apiUrl', upstream.apiUrl);
  } else if (upstream.kind === undefined || upstream.kind === 'oidc') {
    checkUrl('upstream.issuer', upstream.issuer);
  } else {
    fail(`upstream.kind must be "oidc" or "github" (got ${JSON.stringify((upstream as { kind: unknown }).kind)})`);
  }
  return {
    ...options,
    path,
    issuer: `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`,
    accessTokenTtlSec: positive('accessTokenTtlSec', options.accessTokenTtlSec, 3600),
    refreshTokenTtlSec: positive('refreshTokenTtlSec', options.refreshTokenTtlSec, 1_209_600),
    keyRotationSec: positive('keyRotationSec', options.keyRotationSec, 0, true),
    upstreamTimeoutMs: positive('upstreamTimeoutMs', options.upstreamTimeoutMs, 5000),
  };
}

import { assertKnownOptions, McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../options/options-model';
import { McpTokenCipher, type McpOAuthEncryptionKey } from '../token-cipher';
import { MCP_AUTHORIZATION_SERVER_MODULE_OPTIONS_MODEL } from './mcp-authorization-server-module-model.options';

/** Options of `McpAuthorizationServerModule.forRoot` (and what the `forRootAsync` factory returns). */
export interface McpAuthorizationServerModuleOptions {
  /**
   * The app's public base URL (scheme, host, port, and a base path if any), e.g.
   * `https://mcp.example.com`: https, or http on localhost only; no query or fragment.
   * @validate publicUrl
   */
  publicUrl: string;
  /**
   * Where the authorization server is served on the app: the issuer is `publicUrl` followed by it.
   * @default '/oauth'
   * @validate path
   */
  path?: string;
  /**
   * Where users sign in: an OpenID Connect issuer (`kind: 'oidc'`, the default) or GitHub
   * (`kind: 'github'`).
   * @validate upstream
   */
  upstream: McpAuthorizationServerModuleOptions.Upstream;
  /**
   * The keys that seal the signing keys and cookie keys in the database (AES-256-GCM): the first
   * seals, every one opens, so a new key goes first and the old ones stay until the row was
   * sealed again. Required: without it the server does not boot. Every replica needs the same
   * keys. Generate a key with `openssl rand -base64 32`.
   * @validate encryptionKeys
   */
  encryptionKeys: McpOAuthEncryptionKey[];
  /**
   * Maps the upstream user's claims (an OpenID Connect ID token's, or GitHub's `/user` answer with
   * `sub` its numeric id) to the principal.
   * @default (key `<upstream issuer>#<sub>`, label the first of `name`, `preferred_username`, `email`, `login`, `sub`)
   */
  principal?: (
    claims: Record<string, unknown>,
    upstreamIssuer: string,
  ) => McpAuthorizationServerModuleOptions.Principal | Promise<McpAuthorizationServerModuleOptions.Principal>;
  /**
   * The scopes granted without asking the user (first-party consent): a client gets those it asked
   * for within this list (and within the principal's `scopes`).
   * @default (the `scopes_supported` of the mounts' Protected Resource Metadata)
   */
  scopes?: string[];
  /**
   * Lifetime of an access token, at least 1000, rounded to whole seconds (oidc-provider counts in
   * seconds).
   * @default 3_600_000 (one hour)
   * @minimum 1000
   */
  accessTokenTtlMs?: number;
  /**
   * Lifetime of a refresh token (and of the grant and sign-in session behind it), at least 1000,
   * rounded to whole seconds.
   * @default 1_209_600_000 (14 days)
   * @minimum 1000
   */
  refreshTokenTtlMs?: number;
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
   * How often the signing key is replaced: the next key is published a whole access token
   * lifetime before it signs, and the old one stays published until its tokens expired. `0`:
   * never.
   * @default 0
   * @minimum 0
   */
  keyRotationMs?: number;
  /**
   * Deadline of each request to the upstream provider, body included.
   * @default 5000
   */
  upstreamTimeoutMs?: number;
}

/** The types of `McpAuthorizationServerModuleOptions`. */
export declare namespace McpAuthorizationServerModuleOptions {
  /** What the host makes of the user an upstream identity provider signed in. */
  export interface Principal {
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
  export interface OidcUpstream {
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
  export interface GitHubUpstream {
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
  export type Upstream = OidcUpstream | GitHubUpstream;
}

/** The options checked and completed, as the server uses them. */
export interface McpResolvedAuthorizationServerOptions {
  /** The issuer identifier: `publicUrl` followed by `path`. */
  issuer: string;
  /** The path the server is mounted at (no trailing slash). */
  path: string;
  upstream: McpAuthorizationServerModuleOptions.Upstream;
  principal?: McpAuthorizationServerModuleOptions['principal'];
  scopes?: string[];
  /** Seals the keys kept in the database. */
  cipher: McpTokenCipher;
  /** The lifetimes in whole seconds, as oidc-provider takes them. */
  accessTokenTtlSec: number;
  refreshTokenTtlSec: number;
  keyRotationMs: number;
  upstreamTimeoutMs: number;
  clientIdMetadataDocuments: boolean;
  allowLoopbackHttp: boolean;
  trustProxy: boolean;
}

const WHERE = 'McpAuthorizationServerModule';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

function fail(problem: string): never {
  throw new McpConfigurationError(`${WHERE}: ${problem}`);
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

const OIDC_KEYS = ['kind', 'issuer', 'clientId', 'clientSecret', 'scopes'];
const GITHUB_KEYS = ['kind', 'clientId', 'clientSecret', 'scopes', 'webUrl', 'apiUrl'];

function checkUpstream(upstream: unknown): McpAuthorizationServerModuleOptions.Upstream {
  if (typeof upstream !== 'object' || upstream === null)
    fail('upstream is required (an OpenID Connect issuer or GitHub)');
  const given = upstream as McpAuthorizationServerModuleOptions.Upstream;
  // The secret is checked for presence only: no message repeats it.
  if (!given.clientId || !given.clientSecret) fail('upstream.clientId and upstream.clientSecret are required');
  const known = given.kind === 'github' ? GITHUB_KEYS : OIDC_KEYS;
  assertKnownOptions(
    given,
    known,
    `${WHERE} option "upstream" (${given.kind === 'github' ? 'GitHub' : 'OpenID Connect'})`,
  );
  if (given.kind === 'github') {
    if (given.webUrl !== undefined) checkUrl('upstream.webUrl', given.webUrl);
    if (given.apiUrl !== undefined) checkUrl('upstream.apiUrl', given.apiUrl);
  } else if (given.kind === undefined || given.kind === 'oidc') {
    checkUrl('upstream.issuer', given.issuer);
  } else {
    fail(`upstream.kind must be "oidc" or "github" (got ${JSON.stringify((given as { kind: unknown }).kind)})`);
  }
  return given;
}

/** The server's keys, as its boot messages name them. */
const SERVER_KEYS = {
  option: `${WHERE} option "encryptionKeys"`,
  missing:
    `${WHERE}: option "encryptionKeys" is required: the signing keys and cookie keys are kept in the database ` +
    'sealed with it. Set it to [{ id, key }] with a key of 32 random bytes (`openssl rand -base64 32`), the same on every replica.',
};

const CONTEXT: OptionsContext = {
  where: WHERE,
  invalid: (option, expected) => `${WHERE}: ${option} must be ${expected}`,
  nonNegativeInteger: 'an integer of 0 or more',
  validators: {
    publicUrl: ({ value }) => {
      const base = checkUrl('publicUrl', value);
      if (base.search || base.hash) fail('publicUrl must have no query or fragment');
      return base;
    },
    path: ({ value }) => {
      if (value !== undefined && typeof value !== 'string') fail('path must be a string such as "/oauth"');
      const path = `/${(value ?? '/oauth').replace(/^\/+|\/+$/g, '')}`;
      if (path === '/')
        fail('path must not be empty: the authorization server needs a prefix of its own (e.g. "/oauth")');
      return path;
    },
    upstream: ({ value }) => checkUpstream(value),
    encryptionKeys: ({ value }) => new McpTokenCipher(value as McpOAuthEncryptionKey[] | undefined, SERVER_KEYS),
  },
};

type Resolved = ResolvedOptions<
  McpAuthorizationServerModuleOptions,
  typeof MCP_AUTHORIZATION_SERVER_MODULE_OPTIONS_MODEL
>;

/** Whole seconds for oidc-provider. */
const seconds = (ms: number): number => Math.max(1, Math.round(ms / 1000));

/**
 * Checks the options against the options model, applies the defaults and derives the issuer;
 * fails at boot with a message naming the option (never quoting a secret or a key).
 * @throws McpConfigurationError
 */
export function resolveAuthorizationServerOptions(
  options: McpAuthorizationServerModuleOptions,
): McpResolvedAuthorizationServerOptions {
  if (typeof options !== 'object' || options === null)
    fail('options are required ({ publicUrl, upstream, encryptionKeys })');
  const resolved = resolveOptions<Resolved>(MCP_AUTHORIZATION_SERVER_MODULE_OPTIONS_MODEL, options, CONTEXT);
  const base = resolved.publicUrl as unknown as URL;
  const path = resolved.path;
  return {
    issuer: `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`,
    path,
    upstream: resolved.upstream as McpAuthorizationServerModuleOptions.Upstream,
    ...(resolved.principal ? { principal: resolved.principal } : {}),
    ...(resolved.scopes ? { scopes: resolved.scopes } : {}),
    cipher: resolved.encryptionKeys as unknown as McpTokenCipher,
    accessTokenTtlSec: seconds(resolved.accessTokenTtlMs),
    refreshTokenTtlSec: seconds(resolved.refreshTokenTtlMs),
    keyRotationMs: resolved.keyRotationMs,
    upstreamTimeoutMs: resolved.upstreamTimeoutMs,
    clientIdMetadataDocuments: resolved.clientIdMetadataDocuments,
    allowLoopbackHttp: resolved.allowLoopbackHttp,
    trustProxy: resolved.trustProxy,
  };
}

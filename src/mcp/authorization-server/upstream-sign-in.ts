import { createHash, randomBytes } from 'node:crypto';
import type { JWTVerifyGetKey } from 'jose';
import {
  discoverAuthorizationServer,
  fetchJson,
  OnceWhenDone,
  type AuthorizationServerLimits,
} from '../server/oauth/authorization-server-metadata';
import { loadJose } from '../server/oauth/jose-loader';
import { McpAuthorizationServerError } from '../server/oauth/oauth.errors';
import type { McpAuthorizationServerModuleOptions } from './authorization-server.options';

/** What a sign-in in progress keeps until the user comes back: its PKCE verifier and nonce. */
export interface UpstreamTransaction {
  /** The interaction of the authorization server the sign-in finishes. */
  uid: string;
  codeVerifier: string;
  nonce: string;
}

/** The user the upstream provider signed in. */
export interface UpstreamUser {
  /** Who vouches for the claims: the OpenID Connect issuer, or GitHub's web origin. */
  issuer: string;
  /** The claims: the ID token's, or GitHub's `/user` answer with `sub` its numeric id. */
  claims: Record<string, unknown>;
}

/** A refusal by the upstream provider or a broken answer from it, rendered as an OAuth error. */
export class McpUpstreamSignInError extends Error {
  constructor(
    /** The OAuth error code handed back to the client (`access_denied`, `server_error`...). */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'McpUpstreamSignInError';
  }
}

function random(): string {
  return randomBytes(32).toString('base64url');
}

/** A fresh transaction for the interaction `uid`, and the values the authorization URL carries. */
export function newTransaction(uid: string): UpstreamTransaction & { state: string; codeChallenge: string } {
  const codeVerifier = random();
  return {
    uid,
    codeVerifier,
    nonce: random(),
    state: random(),
    codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
  };
}

/** One upstream identity provider: where to send the user, and how to read who came back. */
export interface UpstreamSignIn {
  /** The URL the user's browser is sent to. */
  authorizationUrl(transaction: ReturnType<typeof newTransaction>): Promise<string>;
  /** Exchanges the code the user came back with and reads the user. */
  finish(code: string, transaction: UpstreamTransaction): Promise<UpstreamUser>;
}

/** The upstream sign-in of the configured provider, calling back to `redirectUri`. */
export function upstreamSignIn(
  upstream: McpAuthorizationServerModuleOptions.Upstream,
  redirectUri: string,
  limits: AuthorizationServerLimits,
): UpstreamSignIn {
  return upstream.kind === 'github'
    ? new GitHubSignIn(upstream, redirectUri, limits)
    : new OidcSignIn(upstream, redirectUri, limits);
}

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

function tokenFailure(status: number, body: unknown): McpUpstreamSignInError {
  const error = (body as { error?: unknown } | undefined)?.error;
  return new McpUpstreamSignInError(
    'server_error',
    `The upstream token endpoint answered HTTP ${status}${typeof error === 'string' ? ` (${error})` : ''}`,
  );
}

/**
 * Authorization code with PKCE at an OpenID Connect provider: the ID token's signature (the
 * provider's JWKS), issuer, audience and nonce are checked before its claims are used.
 */
class OidcSignIn implements UpstreamSignIn {
  private readonly metadata: OnceWhenDone<Record<string, unknown>>;
  private readonly keys: OnceWhenDone<JWTVerifyGetKey>;
  private readonly issuer: string;

  constructor(
    private readonly upstream: McpAuthorizationServerModuleOptions.OidcUpstream,
    private readonly redirectUri: string,
    private readonly limits: AuthorizationServerLimits,
  ) {
    this.issuer = upstream.issuer.replace(/\/+$/, '');
    this.metadata = new OnceWhenDone(() => discoverAuthorizationServer(this.issuer, limits));
    this.keys = new OnceWhenDone(async () => {
      const jose = loadJose('McpAuthorizationServerModule');
      const jwksUri = (await this.metadata.get()).jwks_uri;
      if (typeof jwksUri !== 'string')
        throw new McpAuthorizationServerError(`The metadata of ${this.issuer} has no jwks_uri`);
      return jose.createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: limits.timeoutMs,
        [jose.customFetch]: async (url: string, init: RequestInit) => {
          const { status, body } = await fetchJson(url, { method: init.method, headers: init.headers }, limits);
          return new Response(JSON.stringify(body ?? null), {
            status,
            headers: { 'Content-Type': 'application/json' },
          });
        },
      });
    });
  }

  async authorizationUrl(transaction: ReturnType<typeof newTransaction>): Promise<string> {
    const endpoint = (await this.metadata.get()).authorization_endpoint;
    if (typeof endpoint !== 'string')
      throw new McpAuthorizationServerError(`The metadata of ${this.issuer} has no authorization_endpoint`);
    const url = new URL(endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.upstream.clientId,
      redirect_uri: this.redirectUri,
      scope: (this.upstream.scopes ?? ['openid', 'profile', 'email']).join(' '),
      state: transaction.state,
      nonce: transaction.nonce,
      code_challenge: transaction.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url.href;
  }

  async finish(code: string, transaction: UpstreamTransaction): Promise<UpstreamUser> {
    const metadata = await this.metadata.get();
    if (typeof metadata.token_endpoint !== 'string')
      throw new McpAuthorizationServerError(`The metadata of ${this.issuer} has no token_endpoint`);
    const { status, body } = await fetchJson(
      metadata.token_endpoint,
      {
        method: 'POST',
        headers: {
          Authorization: basic(this.upstream.clientId, this.upstream.clientSecret),
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: this.redirectUri,
          code_verifier: transaction.codeVerifier,
        }).toString(),
      },
      this.limits,
    );
    const idToken = (body as { id_token?: unknown } | undefined)?.id_token;
    if (status !== 200) throw tokenFailure(status, body);
    if (typeof idToken !== 'string')
      throw new McpUpstreamSignInError('server_error', 'The upstream provider answered without an ID token');
    const jose = loadJose('McpAuthorizationServerModule');
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jose.jwtVerify(idToken, await this.keys.get(), {
        issuer: this.issuer,
        audience: this.upstream.clientId,
        clockTolerance: 30,
      }));
    } catch (error) {
      throw new McpUpstreamSignInError(
        'server_error',
        `The upstream ID token was refused: ${(error as Error).message}`,
      );
    }
    if (claims.nonce !== transaction.nonce)
      throw new McpUpstreamSignInError(
        'server_error',
        'The upstream ID token does not carry the nonce of this sign-in',
      );
    if (typeof claims.sub !== 'string' || claims.sub === '')
      throw new McpUpstreamSignInError('server_error', 'The upstream ID token has no subject');
    return { issuer: this.issuer, claims };
  }
}

/**
 * GitHub's OAuth 2.0 (authorization code with PKCE, the secret in the token request): GitHub
 * issues no ID token, so the user is read from `/user` with the token, which is then dropped.
 */
class GitHubSignIn implements UpstreamSignIn {
  private readonly web: string;
  private readonly api: string;

  constructor(
    private readonly upstream: McpAuthorizationServerModuleOptions.GitHubUpstream,
    private readonly redirectUri: string,
    private readonly limits: AuthorizationServerLimits,
  ) {
    this.web = (upstream.webUrl ?? 'https://github.com').replace(/\/+$/, '');
    this.api = (upstream.apiUrl ?? 'https://api.github.com').replace(/\/+$/, '');
  }

  authorizationUrl(transaction: ReturnType<typeof newTransaction>): Promise<string> {
    const url = new URL(`${this.web}/login/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: this.upstream.clientId,
      redirect_uri: this.redirectUri,
      scope: (this.upstream.scopes ?? ['read:user']).join(' '),
      state: transaction.state,
      code_challenge: transaction.codeChallenge,
      code_challenge_method: 'S256',
      allow_signup: 'false',
    }).toString();
    return Promise.resolve(url.href);
  }

  async finish(code: string, transaction: UpstreamTransaction): Promise<UpstreamUser> {
    const token = await fetchJson(
      `${this.web}/login/oauth/access_token`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams({
          client_id: this.upstream.clientId,
          client_secret: this.upstream.clientSecret,
          code,
          redirect_uri: this.redirectUri,
          code_verifier: transaction.codeVerifier,
        }).toString(),
      },
      this.limits,
    );
    const accessToken = (token.body as { access_token?: unknown } | undefined)?.access_token;
    // GitHub answers a refused code with HTTP 200 and an `error` field.
    if (token.status !== 200 || typeof accessToken !== 'string') throw tokenFailure(token.status, token.body);
    const user = await fetchJson(
      `${this.api}/user`,
      {
        headers: {
          Authorization: `Bearer ${accessToken}`,
          Accept: 'application/vnd.github+json',
          'User-Agent': 'durable-mcp',
        },
      },
      this.limits,
    );
    const body = user.body as Record<string, unknown> | undefined;
    if (user.status !== 200 || typeof body !== 'object' || body === null || typeof body.id !== 'number')
      throw new McpUpstreamSignInError('server_error', `GitHub's /user answered HTTP ${user.status} without a user`);
    return { issuer: this.web, claims: { ...body, sub: String(body.id) } };
  }
}

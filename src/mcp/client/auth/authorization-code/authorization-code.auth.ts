import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import type { McpAuthChallenge, McpAuthTarget, McpClientAuth } from '../mcp-client-auth.interface';
import { isSecureOrLoopback, trustedIssuers } from '../authorization-server-trust';
import { discoverOAuth, type OAuthDiscovery, type OAuthDiscoveryPolicy } from '../oauth-discovery';
import type { OAuthFetchBounds } from '../oauth-fetch';

/** What runs the flow for the provider: `McpOAuthService`, attached when the client module starts. */
export interface AuthorizationCodeEngine {
  token(auth: AuthorizationCodeAuth, target: Required<McpAuthTarget>): Promise<string>;
  refused(
    auth: AuthorizationCodeAuth,
    target: Required<McpAuthTarget>,
    token: string,
    challenge?: McpAuthChallenge,
  ): Promise<void>;
}

/**
 * The provider `authorizationCode({...})` returns: the client's registration and trust anchors,
 * and the discovery of each endpoint it serves. Tokens and the flow live in `McpOAuthService`.
 */
export class AuthorizationCodeAuth implements McpClientAuth {
  /** The issuers the client may be sent to and authenticate at. */
  readonly issuers: string[];
  /** Bounds of every request to a metadata or token endpoint. */
  readonly bounds: OAuthFetchBounds;
  private engine: AuthorizationCodeEngine | null = null;
  private readonly discoveries = new Map<string, Promise<OAuthDiscovery>>();

  /** How messages name the client: its id, its Client ID Metadata Document URL, or `(dynamically registered)`. */
  readonly label: string;

  constructor(readonly options: authorizationCode.Options) {
    this.label = checkClientOptions(options);
    this.issuers = trustedIssuers({ ...options, clientId: this.label });
    this.bounds = { timeoutMs: options.timeoutMs ?? 10_000, maxBytes: options.maxResponseBytes ?? 65_536 };
  }

  /** Called by `McpOAuthService` when the client module starts. */
  attach(engine: AuthorizationCodeEngine): void {
    this.engine = engine;
  }

  /**
   * What the metadata says about `endpoint` (remembered; a failed discovery is tried again).
   * @throws McpUntrustedAuthorizationServerError when it leads anywhere but a trusted issuer
   */
  discover(endpoint: URL): Promise<OAuthDiscovery> {
    const known = this.discoveries.get(endpoint.href);
    if (known) return known;
    const policy: OAuthDiscoveryPolicy = { ...this.bounds, trustedIssuers: this.issuers };
    const discovery = discoverOAuth(endpoint, null, policy);
    discovery.catch(() => this.discoveries.get(endpoint.href) === discovery && this.discoveries.delete(endpoint.href));
    this.discoveries.set(endpoint.href, discovery);
    return discovery;
  }

  /** Forgets what discovery found for `endpoint`: the next use reads the metadata again. */
  forget(endpoint: URL): void {
    this.discoveries.delete(endpoint.href);
  }

  /** @inheritdoc */
  getToken(target: McpAuthTarget): Promise<string> {
    return this.attached().token(this, this.callTarget(target));
  }

  /** @inheritdoc */
  async invalidate(
    target: McpAuthTarget,
    _store: unknown,
    refusedToken?: string,
    challenge?: McpAuthChallenge,
  ): Promise<void> {
    if (refusedToken) await this.attached().refused(this, this.callTarget(target), refusedToken, challenge);
  }

  private attached(): AuthorizationCodeEngine {
    if (!this.engine)
      throw new McpConfigurationError(
        `authorizationCode() of client "${this.label}" is only usable as the "auth" of a server of McpClientModule (which runs the flow with McpOAuthService)`,
      );
    return this.engine;
  }

  private callTarget(target: McpAuthTarget): Required<McpAuthTarget> {
    if (target.server === undefined)
      throw new McpConfigurationError('authorizationCode() gives tokens for calls of McpClientService only');
    return { url: target.url, server: target.server, scopeKey: target.scopeKey ?? '' };
  }
}

const CLIENT_OPTIONS_HELP =
  'Give "clientId" (the app is registered at the authorization server), "clientMetadataUrl" (the https URL the app serves its Client ID Metadata Document at), ' +
  'or "dynamicRegistration: true" (the app registers itself, RFC 7591); the last two may go together';

/**
 * Checks how the client gets its client id, and answers how messages name it.
 * @throws McpConfigurationError saying what to fix
 */
function checkClientOptions(options: authorizationCode.Options | undefined): string {
  const { clientId, clientSecret, clientMetadataUrl, dynamicRegistration } = options ?? {};
  const refuse = (problem: string) => new McpConfigurationError(`authorizationCode({...}): ${problem}`);
  if (clientId !== undefined && (typeof clientId !== 'string' || clientId === ''))
    throw refuse(`needs "clientId" to be a non-empty string when given. ${CLIENT_OPTIONS_HELP}`);
  if (clientId !== undefined && (clientMetadataUrl !== undefined || dynamicRegistration !== undefined))
    throw refuse(
      `"clientId" comes first (the MCP specification's order), so "clientMetadataUrl" and "dynamicRegistration" would never be used: keep "clientId" alone, or remove it`,
    );
  if (clientSecret !== undefined && clientId === undefined)
    throw refuse(
      '"clientSecret" belongs to a pre-registered client: give its "clientId" too (a client known by its metadata document or registered dynamically is public)',
    );
  if (dynamicRegistration !== undefined && typeof dynamicRegistration !== 'boolean')
    throw refuse(`"dynamicRegistration" must be true or false, not ${JSON.stringify(dynamicRegistration)}`);
  if (clientMetadataUrl !== undefined) {
    const url =
      typeof clientMetadataUrl === 'string' && URL.canParse(clientMetadataUrl) ? new URL(clientMetadataUrl) : null;
    // The authorization server compares the client id with the document's URL exactly: the canonical form only.
    if (
      !url ||
      !isSecureOrLoopback(url) ||
      url.pathname === '/' ||
      `${url.origin}${url.pathname}` !== clientMetadataUrl
    )
      throw refuse(
        `"clientMetadataUrl" ${JSON.stringify(clientMetadataUrl)} is not the URL of a Client ID Metadata Document: give an https URL with a path, ` +
          'without query, fragment or credentials, as the URL parser writes it (e.g. https://app.example.com/oauth/client-metadata.json; http only on a loopback host)',
      );
  }
  if (clientId === undefined && clientMetadataUrl === undefined && dynamicRegistration !== true)
    throw refuse(`the client needs a client id at the authorization server. ${CLIENT_OPTIONS_HELP}`);
  return clientId ?? clientMetadataUrl ?? '(dynamically registered)';
}

/**
 * The OAuth 2.1 authorization code flow with PKCE for an MCP server, tokens per user: each
 * call's `scopeKey` has its own grant, kept sealed in the database (`mcp_oauth_grants`) and
 * refreshed (one refresh at a time across processes, refresh tokens rotated). A call for a user
 * without a grant fails at once with `McpAuthorizationRequiredError`; the app sends the user to
 * `McpOAuthService.authorizationUrl(server, scopeKey)`, and the callback route of the client
 * module (`oauthCallbackPath`) completes it. Needs the module's `oauth` options.
 *
 * The authorization server is found from the server's Protected Resource Metadata, and must be
 * one the configuration trusts (`authorizationServer` or `trustedAuthorizationServers`), as
 * with `clientCredentials`. The client id there is, in the MCP specification's order, `clientId`
 * (pre-registered), else `clientMetadataUrl` when the server supports Client ID Metadata
 * Documents, else one registered dynamically (`dynamicRegistration`).
 * @example `crm: { url: 'https://crm.example.com/mcp', auth: authorizationCode({ clientId: 'my-app', authorizationServer: 'https://login.example.com' }) }`
 */
export function authorizationCode(options: authorizationCode.Options): McpClientAuth {
  return new AuthorizationCodeAuth(options);
}

export declare namespace authorizationCode {
  /** Options of `authorizationCode({...})`. */
  export interface Options {
    /**
     * The client id the app is registered under at the authorization server (with
     * `oauth.redirectUri` as a redirect URI). Given, it is the one used (the MCP specification's
     * first way); without it, `clientMetadataUrl` or `dynamicRegistration` is required.
     * @default none: the client id comes from `clientMetadataUrl` or `dynamicRegistration`
     */
    clientId?: string;
    /**
     * The client secret of a confidential client (`client_secret_basic`, or `client_secret_post`
     * when the server announces only that), with `clientId`. Sent only to a trusted issuer's token endpoint.
     * @default none: a public client (PKCE only)
     */
    clientSecret?: string;
    /**
     * The https URL where the app serves its Client ID Metadata Document (the client module
     * serves it at `oauthClientMetadataPath`): the client id at an authorization server that
     * announces `client_id_metadata_document_supported`. Preferred over `dynamicRegistration`.
     * @default none
     */
    clientMetadataUrl?: string;
    /**
     * Registers the app at an authorization server that announces a `registration_endpoint`
     * (RFC 7591), as a public client with `oauth.redirectUri`, when `clientMetadataUrl` is not
     * usable there. The registration is kept in the database (`mcp_oauth_clients`), one per
     * issuer and redirect URI for every replica.
     * @default false
     */
    dynamicRegistration?: boolean;
    /**
     * Scopes to ask for, space-separated, besides those a 403 `insufficient_scope` asked for.
     * @default the Protected Resource Metadata's `scopes_supported`, else none
     */
    scope?: string;
    /**
     * The issuer the client is registered at (its issuer identifier, as its metadata states it).
     * Required unless `trustedAuthorizationServers` is given.
     * @default none: one of the two is required
     */
    authorizationServer?: string;
    /** Instead of `authorizationServer`: several issuers the client is registered at under this id. @default none */
    trustedAuthorizationServers?: string[];
    /** Deadline of one request to the metadata or token endpoints, in ms. @default 10_000 */
    timeoutMs?: number;
    /** Largest body read from a metadata or token endpoint, in bytes. @default 65_536 */
    maxResponseBytes?: number;
  }
}

import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, type ReadyChild } from './child-process';

/** A client registered at the test authorization server (client credentials, `client_secret_basic`). */
export interface OidcClient {
  client_id: string;
  client_secret?: string;
  /** The scopes it may ask for, space-separated. */
  scope: string;
  /** @default 'client_secret_basic' */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /** The client's public keys, for `private_key_jwt`. */
  jwks?: { keys: object[] };
  /** Makes it an authorization code client (refresh tokens rotated) with these redirect URIs. */
  redirect_uris?: string[];
}

/** A resource the authorization server issues tokens for (RFC 8707 resource indicator). */
export interface OidcResource {
  /** Scopes it accepts, space-separated. */
  scope: string;
  /** @default 'jwt' */
  format?: 'jwt' | 'opaque';
  /** Token lifetime in seconds. @default 600 */
  ttl?: number;
}

/** A running oidc-provider (ES module, so in its own Node process). */
export interface TestAuthorizationServer {
  issuer: string;
  child: ReadyChild;
  /** A client-credentials token for `resource` with `scope`, straight from the token endpoint. */
  token(client: OidcClient, resource: string, scope: string): Promise<string>;
  /** Revokes a token (RFC 7009) as the client it was issued to. */
  revoke(client: OidcClient, token: string): Promise<void>;
  /**
   * Plays the user's browser: opens `authorizationUrl`, signs in as `user` and consents (the
   * test server does both at once), follows every redirect with the cookies it was given, and
   * resolves with the last response (the client's callback answer, or where it redirected).
   */
  authorize(
    authorizationUrl: string,
    user: string,
  ): Promise<{ status: number; url: string; location: string | null; text: string }>;
  /** How many tokens it issued so far, to `clientId` or to anyone; with `grantType`, by that grant only (`refresh_token`...). */
  tokensIssued(clientId?: string, grantType?: string): number;
  /** How many grant requests of `grantType` by `clientId` its token endpoint received so far, answered or refused. */
  grantRequests(clientId: string, grantType: string): number;
  /** The ids of the clients registered dynamically so far (with `registration: true`), oldest first. */
  registeredClients(): string[];
  /** The Client ID Metadata Documents it fetched so far (with `clientIdMetadataDocuments: true`), by URL. */
  documentFetches(): string[];
  stop(): Promise<void>;
}

function basic(client: OidcClient): string {
  return `Basic ${Buffer.from(`${client.client_id}:${client.client_secret ?? ''}`).toString('base64')}`;
}

/** Features of the test authorization server beyond the default ones. */
export interface OidcFeatures {
  /** Opens dynamic client registration (RFC 7591, without an initial access token). @default false */
  registration?: boolean;
  /**
   * Accepts https client ids by their Client ID Metadata Document; one at https://127.0.0.1 is
   * fetched over plain http (the test app stands for an app behind a TLS-terminating proxy).
   * @default false
   */
  clientIdMetadataDocuments?: boolean;
}

/**
 * Starts oidc-provider on a free loopback port with the given clients and resources; `stop()`
 * ends the process (call it in afterAll).
 */
export async function startAuthorizationServer(
  clients: OidcClient[],
  resources: Record<string, OidcResource>,
  port?: number,
  features: OidcFeatures = {},
): Promise<TestAuthorizationServer> {
  const listenOn = port ?? (await freeLoopbackPort());
  const config = {
    port: listenOn,
    clients,
    resources,
    registration: features.registration === true,
    clientIdMetadataDocuments: features.clientIdMetadataDocuments === true,
  };
  const child = await spawnReady(
    process.execPath,
    [join(__dirname, 'oidc-provider.mjs')],
    { env: { ...process.env, OIDC_CONFIG: JSON.stringify(config) } },
    /OIDC READY (\S+)/,
  );
  const issuer = child.ready[1];
  const server: TestAuthorizationServer = {
    issuer,
    child,
    async token(client, resource, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          Authorization: basic(client),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!response.ok || !body.access_token)
        throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async revoke(client, token) {
      const response = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { Authorization: basic(client), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
      if (!response.ok) throw new Error(`revocation endpoint answered ${response.status}: ${await response.text()}`);
    },
    async authorize(authorizationUrl, user) {
      const cookies = new Map<string, string>();
      let url = authorizationUrl;
      for (let hop = 0; hop < 20; hop++) {
        const onServer = url.startsWith(issuer);
        const response = await fetch(url, {
          redirect: 'manual',
          headers: onServer
            ? { 'x-test-user': user, cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') }
            : {},
        });
        if (onServer)
          for (const line of response.headers.getSetCookie()) {
            const [pair] = line.split(';');
            const at = pair.indexOf('=');
            cookies.set(pair.slice(0, at), pair.slice(at + 1));
          }
        const location = response.headers.get('location');
        const text = await response.text();
        if (response.status < 300 || response.status >= 400 || !location || !onServer)
          return { status: response.status, url, location, text };
        url = new URL(location, url).href;
      }
      throw new Error(`too many redirects from ${authorizationUrl}`);
    },
    tokensIssued(clientId, grantType) {
      return [...child.output().matchAll(/^OIDC TOKEN (\S+) (\S+)$/gm)].filter(
        (match) =>
          (clientId === undefined || match[1] === clientId) && (grantType === undefined || match[2] === grantType),
      ).length;
    },
    grantRequests(clientId, grantType) {
      const refused = [...child.output().matchAll(/^OIDC TOKEN REFUSED (\S+) (\S+) \S+$/gm)].filter(
        (match) => match[1] === clientId && match[2] === grantType,
      ).length;
      return this.tokensIssued(clientId, grantType) + refused;
    },
    documentFetches() {
      return [...child.output().matchAll(/^OIDC CIMD FETCH (\S+)$/gm)].map((match) => match[1]);
    },
    registeredClients() {
      return [...child.output().matchAll(/^OIDC REGISTERED (\S+)$/gm)].map((match) => match[1]);
    },
    stop: () => child.stop(),
  };
  return server;
}

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
  /** How many tokens it issued so far, to `clientId` or to anyone. */
  tokensIssued(clientId?: string): number;
  stop(): Promise<void>;
}

function basic(client: OidcClient): string {
  return `Basic ${Buffer.from(`${client.client_id}:${client.client_secret ?? ''}`).toString('base64')}`;
}

/**
 * Starts oidc-provider on a free loopback port with the given clients and resources; `stop()`
 * ends the process (call it in afterAll).
 */
export async function startAuthorizationServer(
  clients: OidcClient[],
  resources: Record<string, OidcResource>,
  port?: number,
): Promise<TestAuthorizationServer> {
  const listenOn = port ?? (await freeLoopbackPort());
  const child = await spawnReady(
    process.execPath,
    [join(__dirname, 'oidc-provider.mjs')],
    { env: { ...process.env, OIDC_CONFIG: JSON.stringify({ port: listenOn, clients, resources }) } },
    /OIDC READY (\S+)/,
  );
  const issuer = child.ready[1];
  return {
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
    tokensIssued(clientId) {
      return [...child.output().matchAll(/^OIDC TOKEN (\S+)$/gm)].filter(
        (match) => clientId === undefined || match[1] === clientId,
      ).length;
    },
    stop: () => child.stop(),
  };
}

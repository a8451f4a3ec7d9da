import { authorizationCode, clientCredentials, type McpClientAuth } from '../../../src/mcp';

/**
 * What the conformance CLI hands an OAuth scenario's client in `MCP_CONFORMANCE_CONTEXT` (JSON):
 * the credentials registered at the scenario's authorization server, when it has any.
 */
export interface ScenarioContext {
  name?: string;
  client_id?: string;
  client_secret?: string;
  /** PKCS#8 PEM of the key that signs `private_key_jwt` assertions. */
  private_key_pem?: string;
  signing_algorithm?: string;
}

/** Reads `MCP_CONFORMANCE_CONTEXT`; `{}` when the scenario gives none. */
export function scenarioContext(raw: string | undefined): ScenarioContext {
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('MCP_CONFORMANCE_CONTEXT is not a JSON object');
  return parsed;
}

/**
 * The authorization servers the scenario's server names in its Protected Resource Metadata (the
 * well-known URLs, else the `resource_metadata` of the 401 a tokenless POST gets). A user
 * configures the issuer their client is registered at; here the conformance CLI started both
 * the server and its authorization server, so what the server names is what the user would
 * write. A server that names none (no Protected Resource Metadata: the 2025-03-26 scenarios) has
 * its authorization server at its own origin, which is then what a user would trust.
 */
export async function scenarioIssuers(serverUrl: string): Promise<string[]> {
  const endpoint = new URL(serverUrl);
  const path = endpoint.pathname === '/' ? '' : endpoint.pathname.replace(/\/$/, '');
  const candidates = [
    `${endpoint.origin}/.well-known/oauth-protected-resource${path}`,
    `${endpoint.origin}/.well-known/oauth-protected-resource`,
  ];
  const probe = await fetch(endpoint, {
    method: 'POST',
    headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'conformance-issuers', method: 'ping' }),
  }).catch(() => null);
  await probe?.body?.cancel().catch(() => undefined);
  const named = /resource_metadata="([^"]+)"/.exec(probe?.headers.get('www-authenticate') ?? '')?.[1];
  if (named) candidates.push(named);
  for (const url of candidates) {
    const response = await fetch(url, { headers: { Accept: 'application/json' } }).catch(() => null);
    if (!response?.ok) continue;
    const body = (await response.json().catch(() => null)) as { authorization_servers?: unknown } | null;
    const servers = Array.isArray(body?.authorization_servers)
      ? body.authorization_servers.filter((s): s is string => typeof s === 'string')
      : [];
    if (servers.length > 0) return servers;
  }
  return [endpoint.origin];
}

/**
 * The `auth` a user holding these credentials would configure: `clientCredentials` with the
 * secret, or with the key (`private_key_jwt`), trusting `issuers`. Without credentials there is
 * nothing to configure: the client the scenario meets has no OAuth registration (the module's
 * client does no authorization_code flow, no dynamic registration, no Client ID Metadata
 * Document), so the server entry stays a plain `{ url }`.
 */
export function scenarioAuth(context: ScenarioContext, issuers: string[]): McpClientAuth | undefined {
  const clientId = context.client_id;
  if (!clientId || issuers.length === 0) return undefined;
  if (context.private_key_pem) {
    return clientCredentials({
      clientId,
      privateKeyJwt: { key: context.private_key_pem, alg: context.signing_algorithm ?? 'ES256' },
      trustedAuthorizationServers: issuers,
    });
  }
  if (context.client_secret)
    return clientCredentials({ clientId, clientSecret: context.client_secret, trustedAuthorizationServers: issuers });
  return undefined;
}

/**
 * The client id URL of the scenarios' Client ID Metadata Document: the one their authorization
 * servers expect a client to use, as a user would configure the URL where their app serves it.
 */
export const CONFORMANCE_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/**
 * The `auth` of a scenario that hands out no client credentials: user-delegated OAuth
 * (`authorizationCode`) with a client id from the scenario (pre-registered) or else from a
 * Client ID Metadata Document or dynamic registration, as the authorization server offers,
 * trusting `issuers`. Undefined when nothing names an authorization server.
 */
export function scenarioUserAuth(context: ScenarioContext, issuers: string[]): McpClientAuth | undefined {
  if (issuers.length === 0) return undefined;
  return context.client_id
    ? authorizationCode({ clientId: context.client_id, trustedAuthorizationServers: issuers })
    : authorizationCode({
        clientMetadataUrl: CONFORMANCE_CLIENT_METADATA_URL,
        dynamicRegistration: true,
        trustedAuthorizationServers: issuers,
      });
}

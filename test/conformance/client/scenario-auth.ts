import { clientCredentials, type McpClientAuth } from '../../../src/mcp';

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
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('MCP_CONFORMANCE_CONTEXT is not a JSON object');
  return parsed as ScenarioContext;
}

/**
 * The `auth` a user holding these credentials would configure: `clientCredentials` with the
 * secret, or with the key (`private_key_jwt`). Without credentials there is nothing to
 * configure: the client the scenario meets has no OAuth registration (the module's client does
 * no authorization_code flow, no dynamic registration, no Client ID Metadata Document), so the
 * server entry stays a plain `{ url }`.
 */
export function scenarioAuth(context: ScenarioContext): McpClientAuth | undefined {
  const clientId = context.client_id;
  if (!clientId) return undefined;
  if (context.private_key_pem) {
    return clientCredentials({ clientId, privateKeyJwt: { key: context.private_key_pem, alg: context.signing_algorithm ?? 'ES256' } });
  }
  if (context.client_secret) return clientCredentials({ clientId, clientSecret: context.client_secret });
  return undefined;
}

import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { bothTrustedIssuerOptionsMessage, invalidTrustedIssuerMessage, missingTrustedIssuerMessage } from '../../mcp.messages';

/** Whether `url` is on this machine: plain http is accepted there only. */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether `url` may carry a credential: https, or http to a loopback host. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url));
}

/** Whether two URLs (absolute strings or URL objects) share scheme, host and port. */
export function sameOrigin(a: string | URL, b: string | URL): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** The trust anchors of a `clientCredentials` entry, as given. */
export interface TrustedIssuerOptions {
  clientId: string;
  authorizationServer?: string;
  trustedAuthorizationServers?: readonly string[];
}

function checkIssuer(clientId: string, option: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not a non-empty string'));
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not an absolute URL'));
  }
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'has a query or fragment'));
  }
  if (url.username || url.password) throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'carries credentials'));
  if (!isSecureOrLoopback(url)) throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not https'));
  return value;
}

/**
 * The issuers a `clientCredentials` entry may send its credentials to: `authorizationServer`, or
 * every entry of `trustedAuthorizationServers`. Exactly one of the two must be given.
 * @throws McpConfigurationError saying what to add or fix
 */
export function trustedIssuers(options: TrustedIssuerOptions): string[] {
  const { clientId, authorizationServer, trustedAuthorizationServers } = options;
  if (authorizationServer !== undefined && trustedAuthorizationServers !== undefined) throw new McpConfigurationError(bothTrustedIssuerOptionsMessage(clientId));
  if (authorizationServer !== undefined) return [checkIssuer(clientId, 'authorizationServer', authorizationServer)];
  if (trustedAuthorizationServers === undefined || (Array.isArray(trustedAuthorizationServers) && trustedAuthorizationServers.length === 0)) {
    throw new McpConfigurationError(missingTrustedIssuerMessage(clientId));
  }
  if (!Array.isArray(trustedAuthorizationServers)) {
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, 'trustedAuthorizationServers', trustedAuthorizationServers, 'is not an array'));
  }
  return trustedAuthorizationServers.map((issuer, i) => checkIssuer(clientId, `trustedAuthorizationServers[${i}]`, issuer));
}

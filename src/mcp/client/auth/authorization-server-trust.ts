import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import {
  bothTrustedIssuerOptionsMessage,
  invalidTokenEndpointMessage,
  invalidTrustedIssuerMessage,
  missingTrustedIssuerMessage,
  tokenEndpointWithoutPinnedIssuerMessage,
} from '../../mcp.messages';

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
  if (typeof value !== 'string' || value === '')
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not a non-empty string'));
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not an absolute URL'));
  }
  if (url.search || url.hash || value.includes('?') || value.includes('#')) {
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'has a query or fragment'));
  }
  if (url.username || url.password)
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'carries credentials'));
  if (!isSecureOrLoopback(url))
    throw new McpConfigurationError(invalidTrustedIssuerMessage(clientId, option, value, 'is not https'));
  return value;
}

/**
 * The issuers a `clientCredentials` entry may send its credentials to: `authorizationServer`, or
 * every entry of `trustedAuthorizationServers`. Exactly one of the two must be given.
 * @throws McpConfigurationError saying what to add or fix
 */
export function trustedIssuers(options: TrustedIssuerOptions): string[] {
  const { clientId, authorizationServer, trustedAuthorizationServers } = options;
  if (authorizationServer !== undefined && trustedAuthorizationServers !== undefined)
    throw new McpConfigurationError(bothTrustedIssuerOptionsMessage(clientId));
  if (authorizationServer !== undefined) return [checkIssuer(clientId, 'authorizationServer', authorizationServer)];
  if (
    trustedAuthorizationServers === undefined ||
    (Array.isArray(trustedAuthorizationServers) && trustedAuthorizationServers.length === 0)
  ) {
    throw new McpConfigurationError(missingTrustedIssuerMessage(clientId));
  }
  if (!Array.isArray(trustedAuthorizationServers)) {
    throw new McpConfigurationError(
      invalidTrustedIssuerMessage(
        clientId,
        'trustedAuthorizationServers',
        trustedAuthorizationServers,
        'is not an array',
      ),
    );
  }
  return trustedAuthorizationServers.map((issuer, i) =>
    checkIssuer(clientId, `trustedAuthorizationServers[${i}]`, issuer),
  );
}

/** A `clientCredentials` entry's pinned token endpoint, as given. */
export interface PinnedTokenEndpointOptions {
  clientId: string;
  authorizationServer?: string;
  tokenEndpoint?: string;
}

/**
 * The token endpoint an entry pins, or undefined when it pins none: an https URL (http on a
 * loopback host) without fragment or credentials, given with `authorizationServer`, the one
 * issuer it belongs to. The issuer's metadata may then announce that endpoint or none; the
 * credentials go to no other.
 * @throws McpConfigurationError saying what to fix
 */
export function pinnedTokenEndpoint(options: PinnedTokenEndpointOptions): string | undefined {
  const { clientId, authorizationServer, tokenEndpoint } = options;
  if (tokenEndpoint === undefined) return undefined;
  if (typeof tokenEndpoint !== 'string' || tokenEndpoint === '')
    throw new McpConfigurationError(invalidTokenEndpointMessage(clientId, tokenEndpoint, 'is not a non-empty string'));
  let url: URL;
  try {
    url = new URL(tokenEndpoint);
  } catch {
    throw new McpConfigurationError(invalidTokenEndpointMessage(clientId, tokenEndpoint, 'is not an absolute URL'));
  }
  if (url.hash || tokenEndpoint.includes('#'))
    throw new McpConfigurationError(invalidTokenEndpointMessage(clientId, tokenEndpoint, 'has a fragment'));
  if (url.username || url.password)
    throw new McpConfigurationError(invalidTokenEndpointMessage(clientId, tokenEndpoint, 'carries credentials'));
  if (!isSecureOrLoopback(url))
    throw new McpConfigurationError(invalidTokenEndpointMessage(clientId, tokenEndpoint, 'is not https'));
  if (authorizationServer === undefined)
    throw new McpConfigurationError(tokenEndpointWithoutPinnedIssuerMessage(clientId));
  return tokenEndpoint;
}

/** Whether two absolute URLs are the same once parsed (default port, percent-encoding and host case aside). */
export function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

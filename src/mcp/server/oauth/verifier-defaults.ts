import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidVerifierLimitMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../config/mcp.options';
import { DEFAULT_MAX_RESPONSE_BYTES, type AuthorizationServerLimits } from './authorization-server-metadata';

/** What a verifier takes from the mount's `oauth` option when its own settings leave it out. */
export interface VerifierDefaults {
  issuer: string;
  /** The accepted audiences: the resource, and its spelling with a trailing slash when its path is empty. */
  audience: string[];
}

/**
 * The issuer and audience of a verifier: its own settings first, then the mount's `oauth` (the
 * only authorization server, and the resource). Fails at boot when neither says.
 * @throws McpConfigurationError
 */
export function verifierDefaults(
  name: string,
  own: { issuer?: string; audience?: string },
  mount: McpResolvedOptions | undefined,
): VerifierDefaults {
  const oauth = mount?.oauth;
  const servers = oauth?.document.authorization_servers ?? [];
  const issuer = own.issuer ?? (servers.length === 1 ? servers[0] : undefined);
  if (!issuer) {
    throw new McpConfigurationError(
      servers.length > 1
        ? `${name}: the mount lists several authorization servers; say which one issues its tokens with ${name}.configure({ issuer })`
        : `${name} needs an issuer: set the mount's oauth option ({ publicUrl, authorizationServers: [issuer] }) or ${name}.configure({ issuer })`,
    );
  }
  const resource = own.audience ?? oauth?.resource;
  if (!resource) {
    throw new McpConfigurationError(
      `${name} needs an audience (the resource URI tokens are issued for): set the mount's oauth option or ${name}.configure({ audience })`,
    );
  }
  const audience = [resource];
  try {
    const url = new URL(resource);
    if (url.pathname === '/' && !resource.endsWith('/')) audience.push(`${resource}/`);
  } catch {
    // An audience that is not a URL (some servers use plain names) is compared as it is.
  }
  return { issuer, audience };
}

/**
 * The bounds of each request a verifier makes to the authorization server: `timeoutMs` (default
 * 5000) and `maxResponseBytes` (default 1 MiB). Fails at boot when one is not a positive integer.
 * @throws McpConfigurationError
 */
export function verifierLimits(
  name: string,
  own: { timeoutMs?: number; maxResponseBytes?: number },
): AuthorizationServerLimits {
  for (const [option, fallback] of [
    ['timeoutMs', '5000 ms'],
    ['maxResponseBytes', `${DEFAULT_MAX_RESPONSE_BYTES} bytes`],
  ] as const) {
    const value = own[option];
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw new McpConfigurationError(invalidVerifierLimitMessage(name, option, value, fallback));
  }
  return { timeoutMs: own.timeoutMs ?? 5000, maxBytes: own.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES };
}

import { assertKnownOptions, McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { optionKeysOf } from '../../options/options-model';
import { MCP_MODULE_OPTIONS_MODEL } from './mcp-module-model.options';
import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** The Protected Resource Metadata document (RFC 9728 section 2) a mount publishes. */
export interface McpProtectedResourceMetadata {
  /** The canonical resource URI. */
  resource: string;
  /** Issuer URLs of the authorization servers. */
  authorization_servers: string[];
  /** The scopes clients may ask for. */
  scopes_supported?: string[];
  /** How tokens are sent: in the `Authorization` header only. */
  bearer_methods_supported: ['header'];
  /** A page of human-readable documentation. */
  resource_documentation?: string;
  /** A human-readable name. */
  resource_name?: string;
}

/** A mount's `oauth` option, checked and completed. */
export interface McpResolvedOAuthOptions {
  /** The canonical resource URI: the audience tokens must carry. */
  resource: string;
  /** Absolute URL of the metadata document, named by `resource_metadata` in challenges. */
  metadataUrl: string;
  /** Scopes every token must carry (possibly none). */
  requiredScopes: string[];
  /** The document served at the well-known paths. */
  document: McpProtectedResourceMetadata;
  /** `Cache-Control` max-age of the document, in seconds. */
  maxAgeSec: number;
}

/** Where RFC 9728 puts the metadata: this prefix, then the resource's path. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

const DEFAULT_MAX_AGE_MS = 3_600_000;

const OAUTH_OPTION_KEYS = optionKeysOf(MCP_MODULE_OPTIONS_MODEL.oauth.options);

/** A scope token of RFC 6749 section 3.3: printable ASCII without space, `"` and `\`. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function fail(mount: string, option: string, problem: string): never {
  throw new McpConfigurationError(`McpModule (mount "${mount}"): oauth.${option} ${problem}`);
}

/**
 * Parses an https URL (http only on a loopback host, for development and tests) without a
 * fragment, and without a query unless `allowQuery`.
 */
function parseUrl(mount: string, option: string, value: unknown, allowQuery = false): URL {
  if (typeof value !== 'string' || value === '') fail(mount, option, 'must be an absolute https URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(mount, option, `must be an absolute https URL (got "${value}")`);
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname) || url.hostname.startsWith('127.');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    fail(mount, option, `must use https (http is accepted for localhost only; got "${value}")`);
  }
  if (url.hash || value.includes('#')) fail(mount, option, `must not have a fragment (got "${value}")`);
  if (!allowQuery && url.search) fail(mount, option, `must not have a query (got "${value}")`);
  return url;
}

/** The URL without a trailing slash on its path, unless the path is only "/" (then none at all). */
function withoutTrailingSlash(url: URL): string {
  const href = url.href;
  return href.endsWith('/') ? href.slice(0, -1) : href;
}

function scopes(mount: string, option: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) fail(mount, option, 'must be an array of scope names');
  for (const scope of value) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) {
      fail(
        mount,
        option,
        `has the invalid scope ${JSON.stringify(scope)} (printable ASCII without spaces, quotes or backslashes)`,
      );
    }
  }
  return [...new Set(value as string[])];
}

/** The metadata URL of a resource: the well-known prefix inserted between its origin and its path. */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/**
 * Checks a mount's `oauth` option and derives its resource URI and metadata document; fails at
 * boot with a message naming the option. Without `authorizationServers`, the app's own
 * authorization server (`ownAuthorizationServer`, when `McpAuthorizationServerModule` is imported) is named.
 * @throws McpConfigurationError
 */
export function resolveOAuthOptions(
  mount: string,
  path: string,
  options: McpModuleOptions.OAuth | undefined,
  ownAuthorizationServer?: string,
): McpResolvedOAuthOptions | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new McpConfigurationError(
      `McpModule (mount "${mount}"): oauth must be an object ({ publicUrl | resource, authorizationServers, ... })`,
    );
  }
  assertKnownOptions(options, OAUTH_OPTION_KEYS, `McpModule (mount "${mount}") option "oauth"`);
  if (options.resource !== undefined && options.publicUrl !== undefined) {
    fail(
      mount,
      'resource',
      'and oauth.publicUrl are exclusive: give the full resource URI, or the public base URL it is derived from',
    );
  }
  let resource: string;
  if (options.resource !== undefined) {
    resource = withoutTrailingSlash(parseUrl(mount, 'resource', options.resource, true));
  } else if (options.publicUrl !== undefined) {
    const base = withoutTrailingSlash(parseUrl(mount, 'publicUrl', options.publicUrl));
    resource = base + (path.startsWith('/') ? path : `/${path}`);
    resource = withoutTrailingSlash(new URL(resource));
  } else {
    return fail(
      mount,
      'publicUrl',
      'is required (or oauth.resource): the resource URI tokens must be issued for is derived from it, e.g. publicUrl: "https://mcp.example.com"',
    );
  }
  const servers =
    options.authorizationServers === undefined && ownAuthorizationServer !== undefined
      ? [ownAuthorizationServer]
      : options.authorizationServers;
  if (!Array.isArray(servers) || servers.length === 0) {
    fail(
      mount,
      'authorizationServers',
      'must list at least one authorization server (its issuer URL), or the app imports McpAuthorizationServerModule',
    );
  }
  const authorizationServers = servers.map((server, i) =>
    withoutTrailingSlash(parseUrl(mount, `authorizationServers[${i}]`, server)),
  );
  const requiredScopes = scopes(mount, 'requiredScopes', options.requiredScopes) ?? [];
  const scopesSupported = scopes(mount, 'scopesSupported', options.scopesSupported);
  const missing = scopesSupported ? requiredScopes.filter((scope) => !scopesSupported.includes(scope)) : [];
  if (missing.length > 0)
    fail(mount, 'scopesSupported', `must include the required scopes (missing: ${missing.join(', ')})`);
  const maxAgeMs = options.metadataMaxAgeMs ?? DEFAULT_MAX_AGE_MS;
  if (!Number.isInteger(maxAgeMs) || maxAgeMs < 0) fail(mount, 'metadataMaxAgeMs', 'must be a non-negative integer');
  const maxAgeSec = Math.ceil(maxAgeMs / 1000);
  if (options.resourceName !== undefined && (typeof options.resourceName !== 'string' || options.resourceName === '')) {
    fail(mount, 'resourceName', 'must be a non-empty string');
  }
  const documentation =
    options.resourceDocumentation === undefined
      ? undefined
      : parseUrl(mount, 'resourceDocumentation', options.resourceDocumentation, true).href;
  const published = scopesSupported ?? (requiredScopes.length > 0 ? requiredScopes : undefined);
  const document: McpProtectedResourceMetadata = {
    resource,
    authorization_servers: authorizationServers,
    ...(published ? { scopes_supported: published } : {}),
    bearer_methods_supported: ['header'],
    ...(documentation ? { resource_documentation: documentation } : {}),
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  };
  return { resource, metadataUrl: protectedResourceMetadataUrl(resource), requiredScopes, document, maxAgeSec };
}

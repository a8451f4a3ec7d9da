import { McpConfigurationError, assertKnownOptions } from '../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../options/options-model';
import { MCP_GATEWAY_MODULE_OPTIONS_MODEL } from './mcp-gateway-module-model.options';

/** Options of `McpGatewayModule.forRoot`. */
export interface McpGatewayModuleOptions {
  /**
   * The mount (of `McpModule.forRoot`) that re-serves the upstreams.
   * @default 'default'
   * @minLength 1
   */
  mount?: string;
  /**
   * The servers of `McpClientModule` the mount re-serves, each with its prefix, its allow and
   * deny lists and the capabilities to re-serve. A server named twice is refused at boot.
   * @validate upstreams
   */
  upstreams: readonly McpGatewayModuleOptions.Upstream[];
  /**
   * How often the upstreams' lists are read again, so that a change the upstream did not
   * announce reaches the mount (an announced one is read at once, on every replica when the
   * mount has Redis); `0` reads them only at boot and when an upstream announces a change.
   * @default 60_000 (one minute)
   * @minimum 0
   */
  refreshIntervalMs?: number;
  /**
   * The scope key the lists are read with, for upstreams with `scope: 'principal'` (calls use
   * the caller's principal key).
   * @default 'gateway'
   * @minLength 1
   */
  listScopeKey?: string;
}

/** The types of `McpGatewayModuleOptions`. */
export declare namespace McpGatewayModuleOptions {
  /** What a gateway can re-serve of an upstream server. */
  export type Capability = 'tools' | 'prompts' | 'resources';

  /** One upstream server a mount re-serves (an entry of `upstreams` of `McpGatewayModule`). */
  export interface Upstream {
    /** The name of a server declared in `McpClientModule` (its key in `servers`). */
    server: string;
    /**
     * Put before every tool and prompt name the mount serves for this upstream, so that the
     * upstreams' names cannot clash with each other or with the mount's own (and before the names
     * of its resources and templates, which keep their URIs). `''` keeps the names.
     * @default `<server>_`
     */
    prefix?: string;
    /**
     * Re-serve only the tools and prompts with these names, the resources with these URIs and the
     * resource templates with these URI templates (as the upstream names them, before the
     * prefix). `*` matches any run of characters.
     * @default every one
     */
    allow?: readonly string[];
    /** Never re-serve these (same patterns as `allow`; a name both lists match is denied). */
    deny?: readonly string[];
    /** What to re-serve; `'resources'` includes the resource templates. @default ['tools', 'prompts', 'resources'] */
    serve?: readonly Capability[];
  }
}

/** The gateway's options with the defaults applied. */
export interface McpResolvedGatewayOptions {
  mount: string;
  upstreams: Required<McpGatewayModuleOptions.Upstream>[];
  refreshIntervalMs: number;
  listScopeKey: string;
}

const WHERE = 'McpGatewayModule.forRoot';
const CAPABILITIES: readonly McpGatewayModuleOptions.Capability[] = ['tools', 'prompts', 'resources'];
const UPSTREAM_KEYS = ['server', 'prefix', 'allow', 'deny', 'serve'];

function patternsOf(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string' || entry === ''))
    throw new McpConfigurationError(`${WHERE}: option "${path}" must be an array of non-empty names.`);
  return [...(value as string[])];
}

function upstreamOf(value: unknown, index: number): Required<McpGatewayModuleOptions.Upstream> {
  const path = `upstreams[${index}]`;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new McpConfigurationError(`${WHERE}: option "${path}" must be an object with a "server".`);
  const entry = value as Record<string, unknown>;
  assertKnownOptions(entry, UPSTREAM_KEYS, `${WHERE} ${path}`);
  if (typeof entry.server !== 'string' || entry.server === '')
    throw new McpConfigurationError(`${WHERE}: option "${path}.server" must name a server of McpClientModule.`);
  if (entry.prefix !== undefined && typeof entry.prefix !== 'string')
    throw new McpConfigurationError(`${WHERE}: option "${path}.prefix" must be a string.`);
  const serve = entry.serve === undefined ? [...CAPABILITIES] : entry.serve;
  if (
    !Array.isArray(serve) ||
    serve.length === 0 ||
    serve.some((kind) => !CAPABILITIES.includes(kind as McpGatewayModuleOptions.Capability))
  ) {
    throw new McpConfigurationError(
      `${WHERE}: option "${path}.serve" must list some of ${CAPABILITIES.map((c) => `'${c}'`).join(', ')}.`,
    );
  }
  return {
    server: entry.server,
    prefix: entry.prefix ?? `${entry.server}_`,
    allow: patternsOf(entry.allow, `${path}.allow`),
    deny: patternsOf(entry.deny, `${path}.deny`),
    serve: [...new Set(serve as McpGatewayModuleOptions.Capability[])],
  };
}

const CONTEXT: OptionsContext = {
  where: WHERE,
  invalid: (option, expected) => `${WHERE}: option "${option}" must be ${expected}.`,
  nonNegativeInteger: 'an integer of 0 or more',
  validators: {
    upstreams: ({ value }) => {
      if (!Array.isArray(value) || value.length === 0)
        throw new McpConfigurationError(`${WHERE}: option "upstreams" must list at least one upstream server.`);
      const upstreams = value.map(upstreamOf);
      const seen = new Set<string>();
      for (const upstream of upstreams) {
        if (seen.has(upstream.server))
          throw new McpConfigurationError(`${WHERE}: server "${upstream.server}" is named twice in "upstreams".`);
        seen.add(upstream.server);
      }
      return upstreams;
    },
  },
};

/** Applies the defaults of `McpGatewayModule.forRoot` (from the options model) and refuses values that cannot work. */
export function resolveGatewayOptions(options: McpGatewayModuleOptions): McpResolvedGatewayOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new McpConfigurationError(`${WHERE}: options must be an object with "upstreams".`);
  const resolved = resolveOptions<ResolvedOptions<McpGatewayModuleOptions, typeof MCP_GATEWAY_MODULE_OPTIONS_MODEL>>(
    MCP_GATEWAY_MODULE_OPTIONS_MODEL,
    options,
    CONTEXT,
  );
  return {
    mount: resolved.mount,
    upstreams: resolved.upstreams as unknown as Required<McpGatewayModuleOptions.Upstream>[],
    refreshIntervalMs: resolved.refreshIntervalMs,
    listScopeKey: resolved.listScopeKey,
  };
}

import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef, type ApplicationConfig } from '@nestjs/core';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { duplicateMountMessage, unsupportedAdapterMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../config/mcp.options';
import { createMcpBodyReader, type McpBodyLimits } from './mcp-body-reader';
import { installFastifyBodyReader, type FastifyHooksLike } from './mcp-fastify-body-reader';

interface ExpressLike {
  use(handler: unknown): unknown;
  router?: { stack: unknown[] };
}

/** Mount paths (and their body limits) per app (Express or Fastify instance), shared by every mount of the app. */
const registries = new WeakMap<object, Map<string, McpBodyLimits>>();

/** Mount names per app, to refuse two mounts of one name. */
const mountNames = new WeakMap<object, Set<string>>();

/**
 * Nest's ApplicationConfig of the app a module belongs to (the global prefix, enhancers and
 * pipes registered app-wide), as far as the module reads it; undefined outside an app.
 */
export function applicationConfigOf(moduleRef: ModuleRef): Partial<ApplicationConfig> | undefined {
  return (moduleRef as unknown as { container?: { applicationConfig?: Partial<ApplicationConfig> } }).container
    ?.applicationConfig;
}

/** The app's global prefix, when it has one. */
function globalPrefixOf(moduleRef: ModuleRef): string {
  return applicationConfigOf(moduleRef)?.getGlobalPrefix?.() ?? '';
}

/** The reader as the first middleware of the Express app, ahead of the body parsers Nest or the host installed. */
function installExpressBodyReader(app: ExpressLike, limitsFor: (path: string) => McpBodyLimits | null): void {
  app.use(createMcpBodyReader(limitsFor));
  const stack = app.router?.stack;
  if (stack) stack.unshift(stack.pop());
}

function normalize(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, '') : withSlash;
}

/** `path` with its percent-escapes decoded once, as a router decodes it; an invalid escape stays as it is. */
function decodeEscapes(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    // Not valid UTF-8 as a whole: decode the ASCII escapes, which is all an ASCII path needs.
    return path.replace(/%[0-7][0-9a-fA-F]/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
  }
}

/**
 * The key a path is looked up by: every spelling Express or Fastify may route to the same
 * controller maps to one key (letter case, a trailing slash, repeated slashes, percent-escapes:
 * Fastify routes `/m%63p` to `/mcp`). A spelling that maps to the key but that the router does not
 * route only has its body read by the module before the router answers 404, so erring on the wide
 * side is harmless; the other way round would let a body reach the host's parser and skip the
 * module's limit and deadline.
 */
export function mcpPathKey(path: string): string {
  return normalize(decodeEscapes(path).replace(/\/{2,}/g, '/')).toLowerCase();
}

/** The keys of a mount's path, bare (for a route excluded from the prefix) and under the app's global prefix. */
export function mcpMountPathKeys(path: string, moduleRef: ModuleRef): string[] {
  const prefix = globalPrefixOf(moduleRef);
  const bare = mcpPathKey(path);
  return prefix ? [bare, mcpPathKey(`${normalize(prefix)}${normalize(path)}`)] : [bare];
}

/**
 * Puts the MCP body reader in front of the app's body parsers, once per app, and registers this
 * mount's path and limit with it: first in the Express middleware stack, or as Fastify hooks
 * (`installFastifyBodyReader`). With a global prefix, both the prefixed path and the bare one
 * (for a route excluded from the prefix) are served.
 */
@Injectable()
export class McpBodyReaderInstaller implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** @inheritdoc */
  onModuleInit(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) return; // an application context without HTTP: nothing to serve
    const type = adapter.getType();
    if (type !== 'express' && type !== 'fastify') {
      throw new McpConfigurationError(unsupportedAdapterMessage(this.options.mount, type));
    }
    const app = adapter.getInstance<object>();
    const names = mountNames.get(app) ?? new Set<string>();
    if (names.has(this.options.mount)) throw new McpConfigurationError(duplicateMountMessage(this.options.mount));
    names.add(this.options.mount);
    mountNames.set(app, names);
    let paths = registries.get(app);
    if (!paths) {
      paths = new Map();
      registries.set(app, paths);
      const known = paths;
      const limitsFor = (path: string) => known.get(mcpPathKey(path)) ?? null;
      if (type === 'fastify') installFastifyBodyReader(app as FastifyHooksLike, limitsFor);
      else installExpressBodyReader(app as ExpressLike, limitsFor);
    }
    const limits: McpBodyLimits = { maxBytes: this.options.maxBodyBytes, timeoutMs: this.options.bodyTimeoutMs };
    for (const key of mcpMountPathKeys(this.options.path, this.moduleRef)) paths.set(key, limits);
  }
}

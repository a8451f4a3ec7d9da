import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { duplicateMountMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../mcp.options';
import { createMcpBodyReader, type McpBodyLimits } from './mcp-body-reader';

interface ExpressLike {
  use(handler: unknown): unknown;
  router?: { stack: unknown[] };
}

/** Mount paths (and their body limits) per Express app, shared by every mount of the app. */
const registries = new WeakMap<object, Map<string, McpBodyLimits>>();

/** Mount names per Express app, to refuse two mounts of one name. */
const mountNames = new WeakMap<object, Set<string>>();

/** The app's global prefix, when it has one (Nest keeps it in the container's ApplicationConfig). */
function globalPrefixOf(moduleRef: ModuleRef): string {
  const container = (moduleRef as unknown as { container?: { applicationConfig?: { getGlobalPrefix?: () => string } } }).container;
  return container?.applicationConfig?.getGlobalPrefix?.() ?? '';
}

function normalize(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, '') : withSlash;
}

/**
 * The key a path is looked up by: every spelling Express may route to the same controller maps
 * to one key (letter case, a trailing slash, repeated slashes). A spelling that maps to the key
 * but that Express does not route only has its body read by the module before Express answers
 * 404, so erring on the wide side is harmless; the other way round would let a body reach the
 * host's parser and skip the module's limit.
 */
export function mcpPathKey(path: string): string {
  return normalize(path.replace(/\/{2,}/g, '/')).toLowerCase();
}

/**
 * Puts the MCP body reader in front of the app's body parsers, once per app, and registers this
 * mount's path and limit with it. With a global prefix, both the prefixed path and the bare one
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
    if (adapter.getType() !== 'express') {
      throw new McpConfigurationError(`McpModule (mount "${this.options.mount}") serves HTTP through @nestjs/platform-express; the app uses "${adapter.getType()}".`);
    }
    const app = adapter.getInstance() as ExpressLike;
    const names = mountNames.get(app) ?? new Set<string>();
    if (names.has(this.options.mount)) throw new McpConfigurationError(duplicateMountMessage(this.options.mount));
    names.add(this.options.mount);
    mountNames.set(app, names);
    let paths = registries.get(app);
    if (!paths) {
      paths = new Map();
      registries.set(app, paths);
      const known = paths;
      app.use(createMcpBodyReader((path) => known.get(mcpPathKey(path)) ?? null));
      const stack = app.router?.stack;
      if (stack) stack.unshift(stack.pop());
    }
    const prefix = globalPrefixOf(this.moduleRef);
    const limits: McpBodyLimits = { maxBytes: this.options.maxBodyBytes, timeoutMs: this.options.bodyTimeoutMs };
    paths.set(mcpPathKey(this.options.path), limits);
    if (prefix) paths.set(mcpPathKey(`${normalize(prefix)}${normalize(this.options.path)}`), limits);
  }
}

import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { McpConfigurationError } from '../../errors/mcp-configuration.error';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { duplicateMountMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../../mcp.options';
import { createMcpBodyReader } from './mcp-body.reader';

interface ExpressLike {
  use(handler: unknown): unknown;
  router?: { stack: unknown[] };
}

/** Mount paths (and their body limits) per Express app, shared by every mount of the app. */
const registries = new WeakMap<object, Map<string, number>>();

/** Mount names per Express app, to refuse two mounts of one name. */
const mountNames = new WeakMap<object, Set<string>>();

function normalize(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, '') : withSlash;
}

/**
 * Puts the MCP body reader in front of the app's body parsers, once per app, and registers this
 * mount's path and limit with it. A global prefix is allowed: the path is matched as a suffix.
 */
@Injectable()
export class McpBodyReaderInstaller implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
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
      app.use(
        createMcpBodyReader((path) => {
          const clean = normalize(path);
          for (const [mountPath, limit] of known) if (clean === mountPath || clean.endsWith(mountPath)) return limit;
          return null;
        }),
      );
      const stack = app.router?.stack;
      if (stack) stack.unshift(stack.pop());
    }
    paths.set(normalize(this.options.path), this.options.maxBodyBytes);
  }
}

import type { CanActivate, ConfigurableModuleAsyncOptions, Type } from '@nestjs/common';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../options/options-model';
import { MCP_CONSOLE_MODULE_OPTIONS_MODEL } from './mcp-console-module-model.options';

/** A guard of the console: a `CanActivate` class (resolved by Nest, so it may inject) or an instance. */
export type McpConsoleGuard = Type<CanActivate> | CanActivate;

/**
 * What one reader of the console may see: `'all'` (every row the console shows), or only the rows
 * (sessions, events, tasks, and the chart's counts) whose principal key is one of `principalKeys`.
 * An empty list shows nothing; rows without a principal (some outbound events) only show with `'all'`.
 */
export type McpConsoleScope = 'all' | { principalKeys: string[] };

/**
 * Decides the scope of one console request, after the guards admitted it: gets the request as
 * the adapter hands it over (Express's or Fastify's, with whatever the guard attached, such as
 * `request.user`), returns `'all'` or `{ principalKeys }` (or a promise of it). Anything else
 * answers 500 and shows nothing.
 */
export type McpConsoleScopeFn = (request: unknown) => McpConsoleScope | Promise<McpConsoleScope>;

/** Settings of `McpConsoleModule` that may come from a factory (`forRootAsync`). */
export interface McpConsoleOptions {
  /**
   * Show only the rows of this mount (sessions, inbound events, tasks). Unset: every mount, and
   * the outbound events of the client too.
   * @default (every mount, outbound events included)
   * @validate mount
   */
  mount?: string;
  /**
   * Rows per page of the sessions, events and tasks pages (1 to 500).
   * @default 50
   * @maximum 500
   */
  pageSize?: number;
  /**
   * The idle TTL the console judges sessions by (`expired` once idle for longer): set it to the
   * mount's `sessions.idleTtlMs` when that is not the default.
   * @default 3_600_000 (one hour, McpModule's default)
   */
  idleTtlMs?: number;
  /**
   * Bound of each database query of a page: past it (or with the database away) the page answers
   * 503 instead of waiting. Set the pool's `statement_timeout` too, so PostgreSQL stops the query.
   * @default 5000
   * @maximum 2147483647
   */
  timeoutMs?: number;
  /**
   * What each admitted reader may see, decided per request: every page (sessions, events, an
   * event by id, tasks, the overview's chart and newest events) shows only the rows of the
   * principal keys it returns; a row outside them answers 404 by id. A host that gives each
   * tenant its own view returns `{ principalKeys: [tenantOf(request)] }`, and `'all'` for its
   * operators. Unset: every admitted reader sees every row (the guard alone decides).
   * @default (every row for every reader the guards admit)
   * @validate scope
   */
  scope?: McpConsoleScopeFn;
}

/** What shapes the console's routes and guards: synchronous, also with `forRootAsync`. */
export interface McpConsoleModuleExtras {
  /**
   * HTTP path of the console (under the app's global prefix, if any).
   * @default 'mcp-console'
   */
  path: string;
  /**
   * Who may read the console: required, there is no default. Every route of the console (pages
   * and assets) runs these guards first; a guard that refuses answers 401/403 as it chooses.
   */
  guard: McpConsoleGuard | McpConsoleGuard[];
}

/** What `McpConsoleModule.forRoot` takes. */
export type McpConsoleModuleForRootOptions = McpConsoleOptions & Partial<McpConsoleModuleExtras>;

/** What `McpConsoleModule.forRootAsync` takes: a factory, class or existing provider of `McpConsoleOptions`, plus the extras. */
export type McpConsoleModuleAsyncOptions = ConfigurableModuleAsyncOptions<
  McpConsoleOptions,
  'createMcpConsoleOptions'
> &
  Partial<McpConsoleModuleExtras>;

/** The console's options once checked, defaults applied. */
export interface McpConsoleResolvedOptions {
  /** Only this mount's rows, or every mount when null. */
  mount: string | null;
  /** Rows per page. */
  pageSize: number;
  /** The idle TTL sessions are judged by. */
  idleTtlMs: number;
  /** Bound of each query, in milliseconds. */
  timeoutMs: number;
  /** What each request may see; undefined: every row. */
  scope?: McpConsoleScopeFn;
}

/** Default path of the console. */
export const DEFAULT_CONSOLE_PATH = 'mcp-console';

type Model = typeof MCP_CONSOLE_MODULE_OPTIONS_MODEL;

const WHERE = 'McpConsoleModule';

/** How the console words its option messages, and its two options that need code. */
const CONTEXT: OptionsContext = {
  where: WHERE,
  invalid: (option, expected) => `${WHERE}: option "${option}" must be ${expected}.`,
  nonNegativeInteger: 'an integer of at least 0',
  validators: {
    mount: ({ value }) => {
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value.trim() === '')
        throw new McpConfigurationError(
          `${WHERE}: option "mount" must be the name of a mount (a non-empty string), or left out to show every mount.`,
        );
      return value;
    },
    scope: ({ value }) => {
      if (value === undefined || typeof value === 'function') return value;
      throw new McpConfigurationError(
        `${WHERE}: option "scope" must be a function (request) => 'all' | { principalKeys: string[] }, got ${value === null ? 'null' : typeof value}.`,
      );
    },
  },
};

/** Checks the options (from `forRoot` or the async factory) against the options model and applies the defaults. */
export function resolveConsoleOptions(raw: McpConsoleOptions | undefined): McpConsoleResolvedOptions {
  const options = resolveOptions<ResolvedOptions<McpConsoleOptions, Model>>(
    MCP_CONSOLE_MODULE_OPTIONS_MODEL,
    raw,
    CONTEXT,
  );
  return {
    mount: options.mount ?? null,
    pageSize: options.pageSize,
    idleTtlMs: options.idleTtlMs,
    timeoutMs: options.timeoutMs,
    ...(options.scope ? { scope: options.scope } : {}),
  };
}

/** Checks the extras (`path`, `guard`) and returns the path without surrounding slashes and the guard list. */
export function resolveConsoleExtras(extras: Partial<McpConsoleModuleExtras>): {
  path: string;
  guards: McpConsoleGuard[];
} {
  const path = extras.path ?? DEFAULT_CONSOLE_PATH;
  if (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/.test(path)) {
    throw new McpConfigurationError(
      `${WHERE}: option "path" must be a URL path like 'mcp-console' or 'admin/mcp', got ${JSON.stringify(path)}.`,
    );
  }
  const guard = extras.guard;
  if (guard === undefined || guard === null || (Array.isArray(guard) && guard.length === 0)) {
    throw new McpConfigurationError(
      `${WHERE} has no "guard" option. The console shows who called what: pass guard: MyConsoleGuard (a CanActivate class, ` +
        `e.g. one that checks a bearer token or Basic credentials) to McpConsoleModule.forRoot({...}).`,
    );
  }
  const guards = Array.isArray(guard) ? guard : [guard];
  for (const g of guards) {
    const isClass = typeof g === 'function';
    const isInstance = typeof g === 'object' && g !== null && typeof g.canActivate === 'function';
    if (!isClass && !isInstance) {
      throw new McpConfigurationError(
        `${WHERE}: option "guard" must be a CanActivate class or instance (or a list of them), got ${describe(g)}.`,
      );
    }
  }
  return { path: path.replace(/^\/+|\/+$/g, ''), guards };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object without canActivate()';
  return typeof value === 'string' ? JSON.stringify(value) : typeof value;
}

import type { CanActivate, Type } from '@nestjs/common';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../options/options-model';
import { MCP_HEALTH_MODULE_OPTIONS_MODEL } from './mcp-health-module-model.options';

/** A guard of the health details: a `CanActivate` class (resolved by Nest, so it may inject) or an instance. */
export type McpHealthGuard = Type<CanActivate> | CanActivate;

/** When the client's call queue is down (`queue` of `McpHealthModule`). */
export interface McpHealthQueueCheck {
  /**
   * Fewest workers that must consume the queue.
   * @default 1
   * @minimum 0
   */
  minWorkers?: number;
  /**
   * Longest the oldest waiting call may have waited.
   * @default 60_000 (one minute)
   */
  maxWaitingAgeMs?: number;
}

/** When a mount's task queue is down (`tasks` of `McpHealthModule`). */
export interface McpHealthTasksCheck {
  /**
   * Fewest workers that must consume each task queue.
   * @default (`queue.minWorkers`)
   * @minimum 0
   */
  minWorkers?: number;
  /**
   * Longest the oldest waiting task may have waited.
   * @default (`queue.maxWaitingAgeMs`)
   */
  maxWaitingAgeMs?: number;
  /**
   * Bound of the read of a Bull task queue's counts.
   * @default 5000
   */
  timeoutMs?: number;
}

/** When the audit check is down (`audit` of `McpHealthModule`). */
export interface McpHealthAuditCheck {
  /**
   * Most rows that may wait for the group committer.
   * @default 1000
   * @minimum 0
   */
  maxBacklog?: number;
}

/** When a stdio pool is stuck (`stdio` of `McpHealthModule`). */
export interface McpHealthStdioCheck {
  /**
   * Longest a call may wait for a free process of the pool.
   * @default 30_000 (30 seconds)
   */
  stuckMs?: number;
}

/** Options of `McpHealthModule.forRoot`. */
export interface McpHealthModuleOptions {
  /**
   * Where the module serves `GET <path>/live` and `GET <path>/ready` (a URL path); `false` serves
   * nothing (the host composes the checks of `McpHealthIndicator` in its own `@HealthCheck()`
   * controller).
   * @default 'health'
   * @validate path
   */
  path?: string | false;
  /**
   * The mount whose database bound (`advanced.database.timeoutMs`) the database check uses.
   * @default 'default'
   * @minLength 1
   */
  mount?: string;
  /**
   * Bound of the database round trip.
   * @default (the mount's `advanced.database.timeoutMs`, 5000)
   */
  databaseTimeoutMs?: number;
  /**
   * The client's call queue is down when fewer workers consume it, or when its oldest waiting
   * call has waited longer than `maxWaitingAgeMs`.
   */
  queue?: McpHealthQueueCheck;
  /**
   * The server's task queues (each mount that runs tasks) are down when fewer workers consume
   * them, or when the oldest waiting task has waited longer than `maxWaitingAgeMs`; reading a
   * Bull queue's counts gives up after `timeoutMs`.
   */
  tasks?: McpHealthTasksCheck;
  /** The audit check is down when more rows than `maxBacklog` wait for the group committer. */
  audit?: McpHealthAuditCheck;
  /** A stdio pool is stuck when a call has waited longer than `stuckMs` for a free process. */
  stdio?: McpHealthStdioCheck;
  /**
   * Who may read the reports. Unset, `<path>/live` and `<path>/ready` answer terminus's whole
   * report to anyone (check names, latencies, queue counts, stdio server names, pid, uptime).
   * Set, they answer only `{ "status": ... }` (200 or 503, for load balancers and strangers),
   * and `GET <path>/details` answers the whole readiness report plus the process (pid, uptime)
   * behind these guards, which refuse as they choose (401, 403).
   * @default (none: the reports are public)
   * @validate detailsGuard
   */
  detailsGuard?: McpHealthGuard | McpHealthGuard[];
  /**
   * Readiness runs its checks (a `SELECT 1`, a Redis PING, the queues' counts...) at most once
   * per this many milliseconds: a probe within it gets the last result. Probes that arrive while
   * the checks run share that run, whatever the interval. The drain is never cached: readiness
   * goes down at once when shutdown starts. At most 60_000: a readiness result older than that
   * hides an outage.
   * @default 0 (every probe that finds no run in flight runs the checks)
   * @minimum 0
   */
  minIntervalMs?: number;
}

/** The health options after defaults. */
export interface McpResolvedHealthOptions {
  path: string | false;
  mount: string;
  databaseTimeoutMs: number | null;
  queue: { minWorkers: number; maxWaitingAgeMs: number };
  tasks: { minWorkers: number; maxWaitingAgeMs: number; timeoutMs: number };
  audit: { maxBacklog: number };
  stdio: { stuckMs: number };
  /** The guards of `<path>/details`; undefined: the reports are public and there is no details route. */
  detailsGuards?: McpHealthGuard[];
  /** How long a readiness result serves later probes, in milliseconds. */
  minIntervalMs: number;
}

const WHERE = 'McpHealthModule';

/** Longest `minIntervalMs`: past it a probe could be told "up" long after a dependency went away. */
export const MAX_HEALTH_MIN_INTERVAL_MS = 60_000;

/** How the health module words its option messages, and its options that need code. */
const CONTEXT: OptionsContext = {
  where: WHERE,
  invalid: (option, expected) => `${WHERE}: option "${option}" must be ${expected}.`,
  nonNegativeInteger: 'an integer of 0 or more',
  validators: {
    path: ({ value }) => {
      const path = value ?? 'health';
      if (path !== false && (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path)))
        throw new McpConfigurationError(`${WHERE}: option "path" must be a URL path such as 'health', or false.`);
      return path;
    },
    detailsGuard: ({ value }) => guardsOf(value as McpHealthModuleOptions['detailsGuard']),
  },
};

type Model = typeof MCP_HEALTH_MODULE_OPTIONS_MODEL;

/** Applies the defaults of `McpHealthModule.forRoot` (from the options model) and refuses values that cannot work. */
export function resolveHealthOptions(options: McpHealthModuleOptions = {}): McpResolvedHealthOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new McpConfigurationError(`${WHERE}: options must be an object.`);
  const resolved = resolveOptions<ResolvedOptions<McpHealthModuleOptions, Model>>(
    MCP_HEALTH_MODULE_OPTIONS_MODEL,
    options,
    CONTEXT,
  );
  const path = resolved.path;
  const detailsGuards = resolved.detailsGuard as McpHealthGuard[] | undefined;
  if (detailsGuards && path === false) {
    throw new McpConfigurationError(
      `${WHERE}: option "detailsGuard" guards the details route, and path: false serves no route. Remove detailsGuard, or give a path.`,
    );
  }
  if (resolved.minIntervalMs > MAX_HEALTH_MIN_INTERVAL_MS) {
    throw new McpConfigurationError(
      `${WHERE}: option "minIntervalMs" must be at most ${MAX_HEALTH_MIN_INTERVAL_MS} (a readiness result older than that hides an outage); a few seconds is typical.`,
    );
  }
  const { queue, tasks } = resolved;
  return {
    path,
    mount: resolved.mount,
    databaseTimeoutMs: resolved.databaseTimeoutMs ?? null,
    queue,
    tasks: {
      minWorkers: tasks.minWorkers ?? queue.minWorkers,
      maxWaitingAgeMs: tasks.maxWaitingAgeMs ?? queue.maxWaitingAgeMs,
      timeoutMs: tasks.timeoutMs,
    },
    audit: resolved.audit,
    stdio: resolved.stdio,
    minIntervalMs: resolved.minIntervalMs,
    ...(detailsGuards ? { detailsGuards } : {}),
  };
}

/** The `detailsGuard` option as a list, or undefined when unset; anything but guards is refused. */
function guardsOf(option: McpHealthModuleOptions['detailsGuard']): McpHealthGuard[] | undefined {
  if (option === undefined) return undefined;
  const guards = Array.isArray(option) ? option : [option];
  const isGuard = (g: unknown) =>
    typeof g === 'function' ||
    (typeof g === 'object' && g !== null && typeof (g as CanActivate).canActivate === 'function');
  if (guards.length === 0 || !guards.every(isGuard)) {
    throw new McpConfigurationError(
      `${WHERE}: option "detailsGuard" must be a CanActivate class or instance (or a non-empty list of them), such as detailsGuard: OpsGuard.`,
    );
  }
  return guards;
}

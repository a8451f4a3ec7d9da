import type { CanActivate, Type } from '@nestjs/common';
import { assertKnownOptions, McpConfigurationError, optionKeys } from '../errors/mcp-configuration.errors';
import { DEFAULT_MOUNT } from '../mcp.constants';

/** A guard of the health details: a `CanActivate` class (resolved by Nest, so it may inject) or an instance. */
export type McpHealthGuard = Type<CanActivate> | CanActivate;

/** Options of `McpHealthModule.forRoot`. */
export interface McpHealthModuleOptions {
  /**
   * Where the module serves `GET <path>/live` and `GET <path>/ready`; `false` serves nothing (the
   * host composes the checks of `McpHealthIndicator` in its own `@HealthCheck()` controller).
   * @default 'health'
   */
  path?: string | false;
  /**
   * The mount whose database bound (`database.timeoutMs`) the database check uses.
   * @default 'default'
   */
  mount?: string;
  /**
   * Bound of the database round trip, in milliseconds.
   * @default the mount's `database.timeoutMs` (5000)
   */
  databaseTimeoutMs?: number;
  /**
   * The client's call queue is down when fewer workers consume it, or when its oldest waiting
   * call has waited longer than `maxWaitingAgeMs`.
   * @default { minWorkers: 1, maxWaitingAgeMs: 60_000 }
   */
  queue?: { minWorkers?: number; maxWaitingAgeMs?: number };
  /**
   * The server's task queues (each mount that runs tasks) are down when fewer workers consume
   * them, or when the oldest waiting task has waited longer than `maxWaitingAgeMs`; reading a
   * Bull queue's counts gives up after `timeoutMs`.
   * @default { minWorkers, maxWaitingAgeMs } of `queue` (1 and 60_000), timeoutMs 5000
   */
  tasks?: { minWorkers?: number; maxWaitingAgeMs?: number; timeoutMs?: number };
  /**
   * The audit check is down when more rows than `maxBacklog` wait for the group committer.
   * @default { maxBacklog: 1000 }
   */
  audit?: { maxBacklog?: number };
  /**
   * A stdio pool is stuck when a call has waited longer than `stuckMs` for a free process.
   * @default { stuckMs: 30_000 }
   */
  stdio?: { stuckMs?: number };
  /**
   * Who may read the reports. Unset, `<path>/live` and `<path>/ready` answer terminus's whole
   * report to anyone (check names, latencies, queue counts, stdio server names, pid, uptime).
   * Set, they answer only `{ "status": ... }` (200 or 503, for load balancers and strangers),
   * and `GET <path>/details` answers the whole readiness report plus the process (pid, uptime)
   * behind these guards, which refuse as they choose (401, 403).
   * @default none: the reports are public
   */
  detailsGuard?: McpHealthGuard | McpHealthGuard[];
  /**
   * Readiness runs its checks (a `SELECT 1`, a Redis PING, the queues' counts...) at most once
   * per this many milliseconds: a probe within it gets the last result. Probes that arrive while
   * the checks run share that run, whatever the interval. The drain is never cached: readiness
   * goes down at once when shutdown starts.
   * At most 60_000.
   * @default 0 (every probe that finds no run in flight runs the checks)
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

const HEALTH_OPTION_KEYS = optionKeys<McpHealthModuleOptions>({
  path: true,
  mount: true,
  databaseTimeoutMs: true,
  queue: true,
  tasks: true,
  audit: true,
  stdio: true,
  detailsGuard: true,
  minIntervalMs: true,
});
const WHERE = 'McpHealthModule';

function integer(option: string, value: unknown, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new McpConfigurationError(
      `${WHERE}: option "${option}" must be ${minimum === 0 ? 'an integer of 0 or more' : 'a positive integer'}.`,
    );
  }
  return value;
}

function section<T extends object>(option: string, value: T | undefined, keys: readonly string[]): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new McpConfigurationError(`${WHERE}: option "${option}" must be an object.`);
  assertKnownOptions(value, keys, `${WHERE} option "${option}"`);
  return value;
}

/** Applies the defaults of `McpHealthModule.forRoot` and refuses values that cannot work. */
export function resolveHealthOptions(options: McpHealthModuleOptions = {}): McpResolvedHealthOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new McpConfigurationError(`${WHERE}: options must be an object.`);
  assertKnownOptions(options, HEALTH_OPTION_KEYS, WHERE);
  const path = options.path ?? 'health';
  if (path !== false && (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path))) {
    throw new McpConfigurationError(`${WHERE}: option "path" must be a URL path such as 'health', or false.`);
  }
  if (options.mount !== undefined && (typeof options.mount !== 'string' || !options.mount))
    throw new McpConfigurationError(`${WHERE}: option "mount" must be a mount name.`);
  const queue = section(
    'queue',
    options.queue,
    optionKeys<NonNullable<McpHealthModuleOptions['queue']>>({ minWorkers: true, maxWaitingAgeMs: true }),
  );
  const tasks = section(
    'tasks',
    options.tasks,
    optionKeys<NonNullable<McpHealthModuleOptions['tasks']>>({
      minWorkers: true,
      maxWaitingAgeMs: true,
      timeoutMs: true,
    }),
  );
  const audit = section(
    'audit',
    options.audit,
    optionKeys<NonNullable<McpHealthModuleOptions['audit']>>({ maxBacklog: true }),
  );
  const stdio = section(
    'stdio',
    options.stdio,
    optionKeys<NonNullable<McpHealthModuleOptions['stdio']>>({ stuckMs: true }),
  );
  const detailsGuards = guardsOf(options.detailsGuard);
  if (detailsGuards && path === false) {
    throw new McpConfigurationError(
      `${WHERE}: option "detailsGuard" guards the details route, and path: false serves no route. Remove detailsGuard, or give a path.`,
    );
  }
  const minWorkers = integer('queue.minWorkers', queue.minWorkers, 1, 0);
  const maxWaitingAgeMs = integer('queue.maxWaitingAgeMs', queue.maxWaitingAgeMs, 60_000, 1);
  return {
    path,
    mount: options.mount ?? DEFAULT_MOUNT,
    databaseTimeoutMs:
      options.databaseTimeoutMs === undefined ? null : integer('databaseTimeoutMs', options.databaseTimeoutMs, 0, 1),
    queue: { minWorkers, maxWaitingAgeMs },
    tasks: {
      minWorkers: integer('tasks.minWorkers', tasks.minWorkers, minWorkers, 0),
      maxWaitingAgeMs: integer('tasks.maxWaitingAgeMs', tasks.maxWaitingAgeMs, maxWaitingAgeMs, 1),
      timeoutMs: integer('tasks.timeoutMs', tasks.timeoutMs, 5000, 1),
    },
    audit: { maxBacklog: integer('audit.maxBacklog', audit.maxBacklog, 1000, 0) },
    stdio: { stuckMs: integer('stdio.stuckMs', stdio.stuckMs, 30_000, 1) },
    minIntervalMs: minInterval(options.minIntervalMs),
    ...(detailsGuards ? { detailsGuards } : {}),
  };
}

/** Longest `minIntervalMs`: past it a probe could be told "up" long after a dependency went away. */
export const MAX_HEALTH_MIN_INTERVAL_MS = 60_000;

function minInterval(value: unknown): number {
  const ms = integer('minIntervalMs', value, 0, 0);
  if (ms > MAX_HEALTH_MIN_INTERVAL_MS) {
    throw new McpConfigurationError(
      `${WHERE}: option "minIntervalMs" must be at most ${MAX_HEALTH_MIN_INTERVAL_MS} (a readiness result older than that hides an outage); a few seconds is typical.`,
    );
  }
  return ms;
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

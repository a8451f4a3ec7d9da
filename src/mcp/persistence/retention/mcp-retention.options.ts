import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../errors/mcp-configuration.errors';

/**
 * What the pruner of one mount deletes (`McpModule` option `retention`). Every duration is in
 * milliseconds; every kind of row is kept forever unless its key is set. Setting any key starts
 * the pruner of the mount, which then also deletes the mount's tasks past their ttl.
 */
export interface McpRetentionOptions {
  /**
   * Delete the mount's inbound `mcp_events` rows created longer ago than this, in milliseconds.
   * @unit ms
   * @default (kept forever)
   */
  events?: number;
  /**
   * Delete the mount's sessions that ended (DELETE, or found idle) or went idle longer ago than
   * this, with their resource subscriptions. A live session is never deleted.
   * @unit ms
   * @minimum 0
   * @default (kept forever)
   */
  sessions?: number;
  /**
   * Grace period after a task's ttl (`expires_at`) before its row and result are deleted.
   * Tasks past their ttl are deleted whenever the pruner runs.
   * @default 0
   * @minimum 0
   * @unit ms
   */
  tasks?: number;
  /**
   * How often the pruner runs.
   * @default 3_600_000 (one hour)
   */
  intervalMs?: number;
  /**
   * Rows deleted per statement; each batch is its own short transaction.
   * @default 1000
   * @maximum 50_000
   */
  batchSize?: number;
  /**
   * Least pause between two batches, in milliseconds; the pause is also at least as long as the
   * batch before it took, so the pruner never keeps the database busier than half the time.
   * @default 20
   * @minimum 0
   */
  batchPauseMs?: number;
}

/**
 * What the pruner of the client deletes (`McpClientModule` option `retention`). Durations in
 * milliseconds; nothing is deleted unless its key is set.
 */
export interface McpClientRetentionOptions {
  /**
   * Delete outbound `mcp_events` rows created longer ago than this, in milliseconds.
   * @unit ms
   * @default (kept forever)
   */
  events?: number;
  /**
   * Delete `mcp_outbound_sessions` rows not established, changed or closed for longer than this,
   * in milliseconds.
   * @unit ms
   * @default (kept forever)
   */
  outboundSessions?: number;
  /**
   * How often the pruner runs.
   * @default 3_600_000 (one hour)
   */
  intervalMs?: number;
  /**
   * Rows deleted per statement; each batch is its own short transaction.
   * @default 1000
   * @maximum 50_000
   */
  batchSize?: number;
  /**
   * Least pause between two batches, in milliseconds (and at least as long as the batch took).
   * @default 20
   * @minimum 0
   */
  batchPauseMs?: number;
}

/** A retention option after defaults: `null` durations keep the rows. */
export interface McpResolvedRetention {
  /** Inbound (mount) or outbound (client) event rows older than this go. */
  events: number | null;
  /** Ended or idle sessions older than this go (mount only). */
  sessions: number | null;
  /** Grace after a task's ttl (mount only; null on the client). */
  tasks: number | null;
  /** Outbound sessions unused for longer than this go (client only). */
  outboundSessions: number | null;
  /** Period of the runner. */
  intervalMs: number;
  /** Rows per batch. */
  batchSize: number;
  /** Pause between batches. */
  batchPauseMs: number;
}

/** Default period of the pruner: one hour. */
export const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000;
/** Default rows per batch. */
export const DEFAULT_RETENTION_BATCH_SIZE = 1000;
/** Default pause between batches. */
export const DEFAULT_RETENTION_BATCH_PAUSE_MS = 20;
/** Largest batch accepted (SQLite binds at most 32766 parameters; PostgreSQL holds row locks for the batch). */
export const MAX_RETENTION_BATCH_SIZE = 50_000;

const MOUNT_RETENTION_KEYS = optionKeys<McpRetentionOptions>({
  events: true,
  sessions: true,
  tasks: true,
  intervalMs: true,
  batchSize: true,
  batchPauseMs: true,
});
const CLIENT_RETENTION_KEYS = optionKeys<McpClientRetentionOptions>({
  events: true,
  outboundSessions: true,
  intervalMs: true,
  batchSize: true,
  batchPauseMs: true,
});

type Refuse = (option: string, expected: string) => never;

function duration(
  refuse: Refuse,
  option: string,
  value: unknown,
  minimum: number,
  unit = 'milliseconds',
): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    refuse(option, minimum === 0 ? `a whole number of ${unit}, 0 or more` : `a positive whole number of ${unit}`);
  }
  return value;
}

function common(
  refuse: Refuse,
  raw: McpRetentionOptions | McpClientRetentionOptions,
): Pick<McpResolvedRetention, 'intervalMs' | 'batchSize' | 'batchPauseMs'> {
  const batchSize = duration(refuse, 'retention.batchSize', raw.batchSize, 1, 'rows') ?? DEFAULT_RETENTION_BATCH_SIZE;
  if (batchSize > MAX_RETENTION_BATCH_SIZE) refuse('retention.batchSize', `at most ${MAX_RETENTION_BATCH_SIZE}`);
  return {
    intervalMs: duration(refuse, 'retention.intervalMs', raw.intervalMs, 1) ?? DEFAULT_RETENTION_INTERVAL_MS,
    batchSize,
    batchPauseMs: duration(refuse, 'retention.batchPauseMs', raw.batchPauseMs, 0) ?? DEFAULT_RETENTION_BATCH_PAUSE_MS,
  };
}

function checkObject(raw: unknown, refuse: Refuse, keys: readonly string[], where: string): raw is object {
  if (raw === undefined || raw === null) return false;
  if (typeof raw !== 'object' || Array.isArray(raw)) refuse('retention', 'an object such as { events: 2592000000 }');
  assertKnownOptions(raw, keys, `${where} option "retention"`);
  return true;
}

/**
 * The `retention` option of a mount, checked; null when it is absent (nothing is pruned).
 * @throws McpConfigurationError on an unknown key or a value that is not a whole number of milliseconds.
 */
export function resolveMountRetention(mount: string, raw: unknown): McpResolvedRetention | null {
  const refuse: Refuse = (option, expected) => {
    throw new McpConfigurationError(`McpModule (mount "${mount}"): option "${option}" must be ${expected}.`);
  };
  if (!checkObject(raw, refuse, MOUNT_RETENTION_KEYS, `McpModule (mount "${mount}")`)) return null;
  const options = raw as McpRetentionOptions;
  return {
    events: duration(refuse, 'retention.events', options.events, 1),
    sessions: duration(refuse, 'retention.sessions', options.sessions, 0),
    tasks: duration(refuse, 'retention.tasks', options.tasks, 0) ?? 0,
    outboundSessions: null,
    ...common(refuse, options),
  };
}

/**
 * The `retention` option of the client, checked; null when it is absent.
 * @throws McpConfigurationError on an unknown key or a value that is not a whole number of milliseconds.
 */
export function resolveClientRetention(raw: unknown): McpResolvedRetention | null {
  const refuse: Refuse = (option, expected) => {
    throw new McpConfigurationError(`McpClientModule option "${option}" must be ${expected}.`);
  };
  if (!checkObject(raw, refuse, CLIENT_RETENTION_KEYS, 'McpClientModule')) return null;
  const options = raw as McpClientRetentionOptions;
  return {
    events: duration(refuse, 'retention.events', options.events, 1),
    sessions: null,
    tasks: null,
    outboundSessions: duration(refuse, 'retention.outboundSessions', options.outboundSessions, 1),
    ...common(refuse, options),
  };
}

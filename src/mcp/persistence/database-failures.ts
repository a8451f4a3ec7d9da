import { McpInfrastructureError } from '../errors/mcp-infrastructure.errors';

/** TypeORM and Redis client errors that mean "no usable connection", whatever the database says. */
const CONNECTION_ERROR_NAMES = new Set([
  'ConnectionIsNotSetError',
  'CannotExecuteNotConnectedError',
  'ConnectionNotFoundError',
  'MaxRetriesPerRequestError',
]);

/** System error codes of a connection that failed or broke. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLite result codes of a database that is busy or unusable rather than refusing one row. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|NOMEM|READONLY|PROTOCOL|NOTADB|CORRUPT)/;

/**
 * SQLSTATEs of a database that is away or overwhelmed rather than of a wrong statement:
 * class 08 (connection), 53 (insufficient resources), 57 (operator intervention: shutdown,
 * `statement_timeout`), 58 (system error), a lock not obtained, the conflicts a retry cures, and
 * 25006 (a write on a read-only server: a standby, until it is promoted).
 */
function isUnavailableSqlState(code: string): boolean {
  if (!/^[0-9A-Z]{5}$/.test(code)) return false;
  return ['08', '53', '57', '58'].includes(code.slice(0, 2)) || ['55P03', '40001', '40P01', '25006'].includes(code);
}

/** Messages of the pg, SQLite and ioredis clients and pools when the connection is gone (they carry no code). */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|Client was closed and is not queryable|connect ECONNREFUSED|Connection is closed|Connection is not established|Stream isn't writeable|pool is (draining|closed|ending)|Cannot use a pool after calling end|database connection is not open|the database system is (shutting down|starting up|in recovery mode)/i;

/**
 * True when an error means a dependency (the database, Redis) is unavailable, busy or stalled,
 * rather than refusing what was asked of it: the endpoint then answers 503 (retry later), and the
 * event log does not retry a batch row by row. A statement rejected for what it is (a
 * constraint, a missing table, a value out of range) is not. TypeORM wraps the driver's error in
 * `driverError`; both are looked at.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  if (error instanceof McpInfrastructureError) return true;
  if (!error || typeof error !== 'object') return false;
  const { name, code, message, driverError } = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    driverError?: { code?: unknown; message?: unknown };
  };
  if (typeof name === 'string' && CONNECTION_ERROR_NAMES.has(name)) return true;
  for (const candidate of [code, driverError?.code]) {
    if (typeof candidate !== 'string') continue;
    if (NETWORK_ERROR_CODES.has(candidate) || isUnavailableSqlState(candidate) || SQLITE_UNAVAILABLE.test(candidate))
      return true;
  }
  return [message, driverError?.message].some((text) => typeof text === 'string' && UNAVAILABLE_MESSAGE.test(text));
}

/** System error codes of a connection that failed or broke. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLite result codes of a database that is busy or unusable rather than refusing one row. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|NOMEM|READONLY|PROTOCOL|NOTADB|CORRUPT)/;

/** Messages of drivers and pools whose connection is gone or cannot be had. */
const CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|connection error|Connection is not established|pool is (draining|closed|ending)|Cannot use a pool after calling end|database connection is not open|ECONNREFUSED/i;

/**
 * True when a failed write says the database is unreachable or unusable (a network error,
 * PostgreSQL's connection classes 08 and 57P, too many connections, a busy or broken SQLite
 * file), as opposed to a refusal of the data written: only a refusal is worth retrying row by
 * row. TypeORM wraps the driver's error in `driverError`; both are looked at.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const candidate of [error, (error as { driverError?: unknown } | null)?.driverError]) {
    if (!candidate || typeof candidate !== 'object') continue;
    const { code, message } = candidate as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (CONNECTION_ERROR_CODES.has(code) || /^(08|57P)/.test(code) || code === '53300' || SQLITE_UNAVAILABLE.test(code)) return true;
    }
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  }
  return !error || typeof error !== 'object';
}

import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';

/** Error names of TypeORM and the database drivers that mean "the database is not there or refused the work". */
const DATABASE_ERROR_NAMES = new Set(['QueryFailedError', 'TypeORMError', 'ConnectionIsNotSetError', 'CannotConnectAlreadyConnectedError', 'DriverError', 'DatabaseError']);

/** System error codes of a connection that failed or broke. */
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08003', '08006']);

/**
 * True when an error means a dependency (the database, Redis) is unavailable rather than a bug:
 * the endpoint then answers 503, which tells clients to retry later.
 */
export function isUnavailableError(error: unknown): boolean {
  if (error instanceof McpInfrastructureError) return true;
  if (!error || typeof error !== 'object') return false;
  const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
  if (typeof name === 'string' && DATABASE_ERROR_NAMES.has(name)) return true;
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
  return typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(message);
}

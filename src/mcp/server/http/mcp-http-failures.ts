import { isDependencyUnavailable } from '../../persistence/database-failures';

/**
 * True when an error means a dependency (the database, Redis) is unavailable rather than a bug:
 * the endpoint then answers 503, which tells clients to retry later. A statement the database
 * rejects for what it is (a constraint, a missing table) stays a 500.
 */
export function isUnavailableError(error: unknown): boolean {
  return isDependencyUnavailable(error);
}

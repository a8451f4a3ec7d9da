import type { DemoConfig } from './demo.config';

/** DATABASE_URL without its password, for messages. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(DATABASE_URL is not a valid URL)';
  }
}

/**
 * What the example app prints when it cannot start: for a database it cannot reach or open, the
 * setting to check and what must be true of it; otherwise the error itself.
 */
export function startupErrorMessage(error: unknown, config: Pick<DemoConfig, 'databaseUrl'>): string {
  const err = error instanceof Error ? error : new Error(String(error));
  const code = (err as { code?: string }).code ?? '';
  // PostgreSQL: 3D000 unknown database, 28xxx authentication, 57P03 starting up; Node: refused, unknown host, timeout.
  const database =
    /^(3D000|28|57P03|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|SQLITE_CANTOPEN)/.test(code) ||
    /connect|database/i.test(err.message);
  if (!database) return `The example app could not start: ${err.stack ?? err.message}`;
  if (config.databaseUrl) {
    return [
      `The example app could not use the database at DATABASE_URL=${redactDatabaseUrl(config.databaseUrl)}: ${err.message}`,
      'The PostgreSQL server must be reachable and the database must exist (create it, e.g. `createdb <name>`); the migrations then create the tables.',
      'Unset DATABASE_URL to use the embedded SQLite database under ./data instead.',
    ].join('\n');
  }
  return `The example app could not open its SQLite database under ./data: ${err.message}`;
}

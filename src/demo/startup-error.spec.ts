import { Client } from 'pg';
import { redactDatabaseUrl, startupErrorMessage } from './startup-error';

describe('startupErrorMessage', () => {
  it('names DATABASE_URL (without its password) and says the database must exist when PostgreSQL cannot be reached', async () => {
    const url = 'postgres://app:s3cret@127.0.0.1:1/missing';
    const error = await new Client({ connectionString: url }).connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    const message = startupErrorMessage(error, { databaseUrl: url });
    expect(message).toContain('DATABASE_URL=postgres://app:***@127.0.0.1:1/missing');
    expect(message).toContain('ECONNREFUSED');
    expect(message).toContain('the database must exist');
    expect(message).not.toContain('s3cret');
    expect(message.split('\n')).toHaveLength(3);
  });

  it('reports any other error with its stack', () => {
    const message = startupErrorMessage(new TypeError('boom'), { databaseUrl: undefined });
    expect(message).toMatch(/^The example app could not start: TypeError: boom\n\s+at /);
  });

  it('redacts only the password', () => {
    expect(redactDatabaseUrl('postgres://u:p@h:5432/d')).toBe('postgres://u:***@h:5432/d');
    expect(redactDatabaseUrl('postgres://u@h/d')).toBe('postgres://u@h/d');
  });
});

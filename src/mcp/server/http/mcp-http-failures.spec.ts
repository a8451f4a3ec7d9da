import { QueryFailedError } from 'typeorm';
import { McpBusUnavailableError, McpDatabaseUnavailableError } from '../../errors/mcp-outage.errors';
import { isUnavailableError } from './mcp-http-failures';

const pgError = (code: string, message = 'pg error') => Object.assign(new Error(message), { code });
const queryFailed = (code: string, message = 'pg error') =>
  new QueryFailedError('INSERT ...', [], pgError(code, message));

describe('isUnavailableError', () => {
  it.each([
    ['a database deadline', new McpDatabaseUnavailableError('session lookup', 5000)],
    ['a session bus outage', new McpBusUnavailableError('publish')],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    [
      'an administrator shutdown (57P01) through TypeORM',
      queryFailed('57P01', 'terminating connection due to administrator command'),
    ],
    ['statement_timeout (57014)', pgError('57014', 'canceling statement due to statement timeout')],
    ['a database starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['too many connections (53300)', pgError('53300', 'sorry, too many clients already')],
    ['a lock not obtained (55P03)', queryFailed('55P03', 'could not obtain lock')],
    ['a pool checkout that timed out', new Error('timeout exceeded when trying to connect')],
    ['a connection that ended under a query', new Error('Connection terminated unexpectedly')],
    ['an ioredis command on a closed connection', new Error('Connection is closed.')],
  ])('is true for %s', (_what, error) => {
    expect(isUnavailableError(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', queryFailed('23505', 'duplicate key value violates unique constraint')],
    ['a missing table (42P01)', queryFailed('42P01', 'relation "mcp_events" does not exist')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('is false for %s', (_what, error) => {
    expect(isUnavailableError(error)).toBe(false);
  });
});

import { McpDatabaseUnavailableError } from '../errors/mcp-outage.errors';
import { McpInfrastructureError } from '../errors/mcp-infrastructure.errors';
import { withDatabaseDeadline } from './database-deadline';

describe('withDatabaseDeadline', () => {
  it('resolves with the work when it finishes first', async () => {
    await expect(withDatabaseDeadline(Promise.resolve(42), 1000, 'lookup')).resolves.toBe(42);
  });

  it("passes the work's own failure through", async () => {
    const failure = new Error('duplicate key');
    await expect(withDatabaseDeadline(Promise.reject(failure), 1000, 'insert')).rejects.toBe(failure);
  });

  it('rejects with McpDatabaseUnavailableError (an infrastructure error) when the work never settles', async () => {
    const error = await withDatabaseDeadline(new Promise<never>(() => undefined), 20, 'session lookup').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpDatabaseUnavailableError);
    expect(error).toBeInstanceOf(McpInfrastructureError);
    expect(error).toMatchObject({
      operation: 'session lookup',
      timeoutMs: 20,
      message: 'The database did not answer within 20 ms (session lookup)',
    });
  });
});

import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { mcpPostgresHostList } from './postgres-host-list';

describe('mcpPostgresHostList', () => {
  it('splits a libpq-style host list into TypeORM options, the first host first, other parameters to the pool', () => {
    const options = mcpPostgresHostList(
      'postgresql://app:p%40ss@db1:6432,[::1],db3/my%20db?target_session_attrs=any&application_name=mcp',
    );
    expect(options).toMatchObject({
      host: 'db1',
      port: 6432,
      username: 'app',
      password: 'p@ss',
      database: 'my db',
      extra: { application_name: 'mcp' },
    });
    expect(typeof options.extra.Client).toBe('function');
    expect(options.extra).not.toHaveProperty('target_session_attrs');
  });

  it('leaves out what the URL does not give', () => {
    const options = mcpPostgresHostList('postgres://db1');
    expect(options).toEqual({ host: 'db1', port: 5432, extra: { Client: expect.any(Function) } });
  });

  it.each([
    ['mysql://db1/app', /must be postgres:/],
    ['postgres://db1:0/app', /no valid port/],
    ['postgres://db1:99999/app', /no valid port/],
    ['postgres://db1,,db2/app', /is not a host\[:port\]/],
    ['postgres://db1/app?target_session_attrs=standby', /read-write or any, not "standby"/],
  ])('refuses %s with a configuration error', (url, message) => {
    expect(() => mcpPostgresHostList(url)).toThrow(McpConfigurationError);
    expect(() => mcpPostgresHostList(url)).toThrow(message);
  });

  it('never puts the password in a message', () => {
    expect(() => mcpPostgresHostList('postgres://app:hunter2@db1:0/app')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });
});

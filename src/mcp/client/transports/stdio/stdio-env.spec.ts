import { buildStdioEnv } from './stdio-env';

describe('buildStdioEnv', () => {
  const parent = {
    HOME: '/home/u',
    PATH: '/usr/bin',
    USER: 'u',
    DATABASE_URL: 'postgres://secret',
    AWS_SECRET_ACCESS_KEY: 'k',
    LANG: 'C',
  };

  it('inherits only the allowlist, then adds the configured variables', () => {
    expect(buildStdioEnv({ API_KEY: 'configured' }, parent, 'linux')).toEqual({
      HOME: '/home/u',
      PATH: '/usr/bin',
      USER: 'u',
      API_KEY: 'configured',
    });
  });

  it('lets the configuration override an inherited variable', () => {
    expect(buildStdioEnv({ PATH: '/opt/bin' }, parent, 'linux').PATH).toBe('/opt/bin');
  });

  it('does not inherit exported shell functions', () => {
    expect(buildStdioEnv({}, { TERM: '() { :; }; echo pwned' }, 'linux')).toEqual({});
  });

  it('on Windows also inherits what programs need to start, whatever the case of the name', () => {
    const env = buildStdioEnv({}, { SystemRoot: 'C:\\Windows', Path: 'C:\\bin', SECRET: 'x' }, 'win32');
    expect(env).toEqual({ SYSTEMROOT: 'C:\\Windows', PATH: 'C:\\bin' });
  });
});

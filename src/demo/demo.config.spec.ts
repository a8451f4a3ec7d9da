import { join } from 'node:path';
import { loadDemoConfig } from './demo.config';

describe('loadDemoConfig AUDIT_COMMIT', () => {
  it('commits audit rows synchronously unless AUDIT_COMMIT=async', () => {
    expect(loadDemoConfig({}).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: '' }).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: 'sync' }).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: ' async ' }).auditCommit).toBe('async');
  });

  it('refuses any other value, saying what it accepts', () => {
    expect(() => loadDemoConfig({ AUDIT_COMMIT: 'off' })).toThrow(
      'AUDIT_COMMIT: "off" is neither sync nor async (example: AUDIT_COMMIT=async)',
    );
  });
});

describe('loadDemoConfig THROTTLE_LIMIT and THROTTLE_TTL_MS', () => {
  it('defaults to 10 calls a minute, and reads both as positive integers', () => {
    expect(loadDemoConfig({}).throttle).toEqual({ limit: 10, ttlMs: 60_000 });
    expect(loadDemoConfig({ THROTTLE_LIMIT: ' ', THROTTLE_TTL_MS: '' }).throttle).toEqual({ limit: 10, ttlMs: 60_000 });
    expect(loadDemoConfig({ THROTTLE_LIMIT: ' 3 ', THROTTLE_TTL_MS: '1000' }).throttle).toEqual({
      limit: 3,
      ttlMs: 1000,
    });
  });

  it.each([
    ['THROTTLE_LIMIT', '0', 'THROTTLE_LIMIT: "0" is not a positive integer (example: THROTTLE_LIMIT=10)'],
    ['THROTTLE_LIMIT', '2.5', 'THROTTLE_LIMIT: "2.5" is not a positive integer (example: THROTTLE_LIMIT=10)'],
    ['THROTTLE_TTL_MS', '1m', 'THROTTLE_TTL_MS: "1m" is not a positive integer (example: THROTTLE_TTL_MS=60000)'],
    [
      'THROTTLE_TTL_MS',
      '99999999999999999999',
      'THROTTLE_TTL_MS: "99999999999999999999" is not a positive integer (example: THROTTLE_TTL_MS=60000)',
    ],
  ])('refuses %s=%s, saying what it accepts', (name, value, message) => {
    expect(() => loadDemoConfig({ [name]: value })).toThrow(message);
  });
});

describe('loadDemoConfig without MCP_TOKENS', () => {
  it('generates a demo token, except with OAUTH_ISSUER', () => {
    expect(loadDemoConfig({}).generatedToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(loadDemoConfig({ OAUTH_ISSUER: 'http://localhost:8080/realms/mcp' }).generatedToken).toBeUndefined();
  });

  it('refuses to start with NODE_ENV=production unless MCP_TOKENS or OAUTH_ISSUER is set', () => {
    expect(() => loadDemoConfig({ NODE_ENV: 'production', MCP_TOKENS: ' ' })).toThrow(
      'Neither MCP_TOKENS nor OAUTH_ISSUER is set: give MCP_TOKENS=principal=token (comma separated pairs), or OAUTH_ISSUER to accept JWT access tokens (with NODE_ENV=production no demo token is generated)',
    );
    expect(loadDemoConfig({ NODE_ENV: 'production', MCP_TOKENS: 'alice=token-a' }).tokens).toEqual(
      new Map([['token-a', 'alice']]),
    );
    expect(
      loadDemoConfig({
        NODE_ENV: 'production',
        OAUTH_ISSUER: 'http://localhost:8080/realms/mcp',
        OAUTH_AUDIENCE: 'http://localhost:3000/mcp',
      }).oauth,
    ).toEqual({
      issuer: 'http://localhost:8080/realms/mcp',
      audience: 'http://localhost:3000/mcp',
      requiredScopes: [],
    });
  });
});

describe('loadDemoConfig MCP_SERVERS_FILE, RELAY_SERVER and DRAIN_TIMEOUT_MS', () => {
  it('relays to the app itself, drains for 10 s and reads no servers file unless told', () => {
    expect(loadDemoConfig({})).toMatchObject({ serversFile: undefined, relayServer: 'self', drainTimeoutMs: 10_000 });
    expect(
      loadDemoConfig({ MCP_SERVERS_FILE: ' ./servers.json ', RELAY_SERVER: 'slow', DRAIN_TIMEOUT_MS: '2500' }),
    ).toMatchObject({
      serversFile: './servers.json',
      relayServer: 'slow',
      drainTimeoutMs: 2500,
    });
  });

  it('refuses a DRAIN_TIMEOUT_MS that is not a positive integer', () => {
    expect(() => loadDemoConfig({ DRAIN_TIMEOUT_MS: '10s' })).toThrow(
      'DRAIN_TIMEOUT_MS: "10s" is not a positive integer (example: DRAIN_TIMEOUT_MS=10000)',
    );
  });
});

describe('loadDemoConfig REDIS_URL and REDIS_PREFIX', () => {
  it("runs calls inline unless REDIS_URL is set, and keeps Bull's key prefix unless REDIS_PREFIX names one", () => {
    expect(loadDemoConfig({})).toMatchObject({ redisUrl: undefined, redisPrefix: undefined });
    expect(loadDemoConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: ' run-1 ' })).toMatchObject({
      redisUrl: 'redis://127.0.0.1:6379',
      redisPrefix: 'run-1',
    });
  });
});

describe('loadDemoConfig RETENTION_*', () => {
  it('prunes nothing unless RETENTION_EVENTS_MS or RETENTION_SESSIONS_MS is set', () => {
    expect(loadDemoConfig({}).retention).toBeUndefined();
    expect(loadDemoConfig({ RETENTION_INTERVAL_MS: '1000' }).retention).toBeUndefined();
  });

  it('passes the durations, period and batch size on as the retention option', () => {
    expect(
      loadDemoConfig({ RETENTION_EVENTS_MS: '86400000', RETENTION_INTERVAL_MS: '60000', RETENTION_BATCH_SIZE: '500' })
        .retention,
    ).toEqual({
      events: 86_400_000,
      intervalMs: 60_000,
      batchSize: 500,
    });
    expect(loadDemoConfig({ RETENTION_SESSIONS_MS: '3600000' }).retention).toEqual({ sessions: 3_600_000 });
  });

  it('refuses a value that is not a positive integer, naming the variable', () => {
    expect(() => loadDemoConfig({ RETENTION_EVENTS_MS: '30d' })).toThrow(
      'RETENTION_EVENTS_MS: "30d" is not a positive integer',
    );
  });
});

describe('loadDemoConfig MCP_CONSOLE_ADMINS', () => {
  it('names no administrator unless set, and reads comma separated principals of MCP_TOKENS', () => {
    expect(loadDemoConfig({ MCP_TOKENS: 'alice=token-a,bob=token-b' }).consoleAdmins).toEqual(new Set());
    expect(
      loadDemoConfig({ MCP_TOKENS: 'alice=token-a,bob=token-b', MCP_CONSOLE_ADMINS: ' alice , ,' }).consoleAdmins,
    ).toEqual(new Set(['alice']));
    expect(loadDemoConfig({ MCP_CONSOLE_ADMINS: 'demo' }).consoleAdmins).toEqual(new Set(['demo']));
  });

  it('refuses a name that is no principal of MCP_TOKENS, listing the known ones', () => {
    expect(() => loadDemoConfig({ MCP_TOKENS: 'alice=token-a,bob=token-b', MCP_CONSOLE_ADMINS: 'alice,ops' })).toThrow(
      'MCP_CONSOLE_ADMINS: "ops" is not a principal of MCP_TOKENS (known: alice, bob; example: MCP_CONSOLE_ADMINS=alice)',
    );
  });
});

describe('loadDemoConfig --stdio, MCP_TRANSPORT and MCP_STDIO_PRINCIPAL', () => {
  it('serves HTTP unless --stdio or MCP_TRANSPORT=stdio asks for stdio, for the principal "local" by default', () => {
    expect(loadDemoConfig({}, ['node', 'main.js']).stdio).toBeUndefined();
    expect(loadDemoConfig({ MCP_TRANSPORT: 'http' }, ['node', 'main.js']).stdio).toBeUndefined();
    expect(loadDemoConfig({}, ['node', 'main.js', '--stdio']).stdio).toEqual({ principal: 'local' });
    expect(loadDemoConfig({ MCP_TRANSPORT: ' STDIO ', MCP_STDIO_PRINCIPAL: 'ada' }, []).stdio).toEqual({
      principal: 'ada',
    });
  });

  it('generates no token over stdio and boots there under NODE_ENV=production without MCP_TOKENS', () => {
    const config = loadDemoConfig({ NODE_ENV: 'production' }, ['--stdio']);
    expect(config.generatedToken).toBeUndefined();
    expect(config.tokens.size).toBe(0);
    expect(() => loadDemoConfig({ NODE_ENV: 'production' }, [])).toThrow('Neither MCP_TOKENS nor OAUTH_ISSUER');
  });

  it('refuses an unknown MCP_TRANSPORT, naming the values it takes', () => {
    expect(() => loadDemoConfig({ MCP_TRANSPORT: 'ws' }, [])).toThrow(
      'MCP_TRANSPORT="ws" is not supported: use http (the default) or stdio',
    );
  });

  it('keeps the SQLite file under ./data unless SQLITE_FILE names one', () => {
    expect(loadDemoConfig({}, []).sqliteFile).toBe(join('data', 'durable-mcp.sqlite'));
    expect(loadDemoConfig({ SQLITE_FILE: '/var/lib/app.sqlite' }, []).sqliteFile).toBe('/var/lib/app.sqlite');
  });
});

const KEY = 'q9yS0mJ3cQm2YV5mJ2xYc0lH1QbqgQ5WkYbqS0n3Hk8=';

describe('loadDemoConfig AUTH_SERVER_*', () => {
  const base = {
    AUTH_SERVER_PUBLIC_URL: 'http://localhost:3000',
    AUTH_SERVER_CLIENT_ID: 'durable-mcp',
    AUTH_SERVER_CLIENT_SECRET: 'secret',
    AUTH_SERVER_ENCRYPTION_KEYS: KEY,
  };

  it('makes the app its own authorization server in front of an OpenID Connect issuer or GitHub, with no demo token', () => {
    const config = loadDemoConfig({ ...base, AUTH_SERVER_UPSTREAM_ISSUER: 'http://keycloak:8080/realms/mcp' });
    expect(config.authServer).toEqual({
      publicUrl: 'http://localhost:3000',
      upstream: {
        kind: 'oidc',
        issuer: 'http://keycloak:8080/realms/mcp',
        clientId: 'durable-mcp',
        clientSecret: 'secret',
      },
      scopes: ['mcp:tools'],
      allowLoopbackHttp: false,
      encryptionKeys: [{ id: 'default', key: KEY }],
    });
    expect(config.generatedToken).toBeUndefined();
    expect(
      loadDemoConfig({ ...base, AUTH_SERVER_UPSTREAM: 'github', AUTH_SERVER_SCOPES: 'mcp:tools, mcp:admin' })
        .authServer,
    ).toEqual({
      publicUrl: 'http://localhost:3000',
      upstream: { kind: 'github', clientId: 'durable-mcp', clientSecret: 'secret' },
      scopes: ['mcp:tools', 'mcp:admin'],
      allowLoopbackHttp: false,
      encryptionKeys: [{ id: 'default', key: KEY }],
    });
    // Rotation: the new key first, the old one after it.
    expect(
      loadDemoConfig({ ...base, AUTH_SERVER_UPSTREAM: 'github', AUTH_SERVER_ENCRYPTION_KEYS: `k2:${KEY}, k1:${KEY}` })
        .authServer?.encryptionKeys,
    ).toEqual([
      { id: 'k2', key: KEY },
      { id: 'k1', key: KEY },
    ]);
    expect(loadDemoConfig({}).authServer).toBeUndefined();
  });

  it('fetches the metadata document of an https://127.0.0.1 client id over http only when AUTH_SERVER_ALLOW_LOOPBACK_HTTP says so', () => {
    const github = { ...base, AUTH_SERVER_UPSTREAM: 'github' };
    expect(loadDemoConfig({ ...github, AUTH_SERVER_ALLOW_LOOPBACK_HTTP: '1' }).authServer?.allowLoopbackHttp).toBe(
      true,
    );
    expect(loadDemoConfig({ ...github, AUTH_SERVER_ALLOW_LOOPBACK_HTTP: 'TRUE' }).authServer?.allowLoopbackHttp).toBe(
      true,
    );
    expect(loadDemoConfig({ ...github, AUTH_SERVER_ALLOW_LOOPBACK_HTTP: 'false' }).authServer?.allowLoopbackHttp).toBe(
      false,
    );
    expect(() => loadDemoConfig({ ...github, AUTH_SERVER_ALLOW_LOOPBACK_HTTP: 'yes' })).toThrow(
      'AUTH_SERVER_ALLOW_LOOPBACK_HTTP="yes" is not 1, true, 0 or false',
    );
  });

  it('refuses an incomplete or contradictory configuration, saying what is missing', () => {
    expect(() => loadDemoConfig({ ...base })).toThrow('AUTH_SERVER_UPSTREAM_ISSUER');
    expect(() =>
      loadDemoConfig({ AUTH_SERVER_PUBLIC_URL: 'http://localhost:3000', AUTH_SERVER_UPSTREAM: 'github' }),
    ).toThrow('AUTH_SERVER_CLIENT_ID and AUTH_SERVER_CLIENT_SECRET');
    expect(() =>
      loadDemoConfig({ ...base, AUTH_SERVER_UPSTREAM: 'github', OAUTH_ISSUER: 'https://as.example' }),
    ).toThrow('AUTH_SERVER_PUBLIC_URL and OAUTH_ISSUER are exclusive');
    expect(() => loadDemoConfig({ ...base, AUTH_SERVER_UPSTREAM: 'github', AUTH_SERVER_ENCRYPTION_KEYS: ' ' })).toThrow(
      'AUTH_SERVER_PUBLIC_URL needs AUTH_SERVER_ENCRYPTION_KEYS',
    );
  });
});

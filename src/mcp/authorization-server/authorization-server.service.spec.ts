import { randomBytes } from 'node:crypto';
import type { HttpAdapterHost } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { MCP_ENTITIES } from '../persistence/entities';
import { McpProtectedResourceMounts } from '../server/oauth/protected-resource-mounts';
import { resolveAuthorizationServerOptions } from './authorization-server.options';
import { McpAuthorizationServer } from './authorization-server.service';
import { defaultUpstreamPrincipal } from './upstream-interactions';
import { TypeOrmProviderAdapter } from './provider-record.store';
import { loadProviderKeys, rotatedKeys, saveProviderKeys, signingKey } from './provider-keys';

const KEY = { id: 'k1', key: randomBytes(32).toString('base64') };

const OPTIONS = resolveAuthorizationServerOptions({
  publicUrl: 'https://mcp.example.com',
  upstream: { issuer: 'https://login.example.com', clientId: 'as', clientSecret: 'secret' },
  encryptionKeys: [KEY],
});
const CIPHER = OPTIONS.cipher;

describe('McpAuthorizationServer', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    await dataSource.initialize();
  });

  afterAll(() => dataSource.destroy());

  function server(adapterHost: Partial<HttpAdapterHost>): McpAuthorizationServer {
    return new McpAuthorizationServer(
      OPTIONS,
      dataSource,
      new McpProtectedResourceMounts(),
      adapterHost as HttpAdapterHost,
    );
  }

  it('names its issuer and the redirect URI to register upstream; in an application context it serves nothing', async () => {
    const own = server({});
    expect(own.issuer).toBe('https://mcp.example.com/oauth');
    expect(own.upstreamRedirectUri).toBe('https://mcp.example.com/oauth/upstream/callback');
    await own.onModuleInit();
    own.onApplicationBootstrap();
    own.onApplicationShutdown();
  });

  it('deletes expired rows once a minute on its own', async () => {
    // Only the interval is faked: TypeORM builds the rows' dates with the real Date.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date'] });
    const own = server({});
    try {
      await own.onModuleInit();
      own.onApplicationBootstrap();
      const sessions = new TypeOrmProviderAdapter(dataSource, 'Session');
      const earlier = new TypeOrmProviderAdapter(dataSource, 'Session', () => new Date(Date.now() - 10_000));
      await earlier.upsert('old', { uid: 'u-old' }, 1);
      await sessions.upsert('new', { uid: 'u-new' }, 3600);
      const count = async () =>
        Number(
          (await dataSource.query(`SELECT count(*) AS n FROM mcp_oauth_provider_records WHERE model = 'Session'`))[0].n,
        );
      expect(await count()).toBe(2);
      await jest.advanceTimersByTimeAsync(60_000);
      for (let turn = 0; turn < 50 && (await count()) !== 1; turn++)
        await new Promise((resolve) => setImmediate(resolve));
      expect(await count()).toBe(1);
      expect(await sessions.find('new')).toEqual({ uid: 'u-new' });
    } finally {
      own.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  it('refuses an HTTP adapter other than Express or Fastify', async () => {
    const own = server({ httpAdapter: { getType: () => 'koa' } as unknown as HttpAdapterHost['httpAdapter'] });
    await expect(own.onModuleInit()).rejects.toThrow(
      new McpConfigurationError(
        'McpAuthorizationServerModule runs on the Express or Fastify adapter of Nest, not "koa"',
      ),
    );
    own.onApplicationShutdown();
  });

  it('maps an upstream user to `<issuer>#<sub>` and the first name-like claim by default', () => {
    expect(defaultUpstreamPrincipal({ sub: 'u1', preferred_username: 'ann', email: 'a@x' }, 'https://idp')).toEqual({
      key: 'https://idp#u1',
      label: 'ann',
    });
    expect(defaultUpstreamPrincipal({ sub: 7, name: '' }, 'https://github.com')).toEqual({
      key: 'https://github.com#7',
      label: '7',
    });
  });
});

describe('provider keys', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    await dataSource.initialize();
  });

  afterAll(() => dataSource.destroy());

  it('are made once and read by every later caller', async () => {
    const first = await loadProviderKeys(dataSource, CIPHER, 1000);
    const second = await loadProviderKeys(dataSource, CIPHER, 2000);
    expect(second.text).toBe(first.text);
    expect(first.keys.keys).toHaveLength(1);
    expect(first.keys.cookieKeys).toHaveLength(1);
  });

  it('are written only over the keys the writer read: a replica that lost the race keeps the winner', async () => {
    const read = await loadProviderKeys(dataSource, CIPHER, 1000);
    const next = (await rotatedKeys(read.keys, 1000 + 10_000, 10_000, 5000))!;
    expect(await saveProviderKeys(dataSource, CIPHER, read.text, next)).toBe(true);
    const loser = (await rotatedKeys(read.keys, 1000 + 10_000, 10_000, 5000))!;
    expect(await saveProviderKeys(dataSource, CIPHER, read.text, loser)).toBe(false);
    expect((await loadProviderKeys(dataSource, CIPHER, 0)).keys).toEqual(next);
  });

  const cipherOf = (...keys: Array<{ id: string; key: string }>) =>
    resolveAuthorizationServerOptions({
      publicUrl: 'https://mcp.example.com',
      upstream: { issuer: 'https://login.example.com', clientId: 'as', clientSecret: 'secret' },
      encryptionKeys: keys,
    }).cipher;
  const rowText = async (): Promise<string> =>
    (await dataSource.query(`SELECT payload FROM mcp_oauth_provider_records WHERE model = 'McpProviderKeys'`))[0]
      .payload as string;

  it('are sealed in their row: no private member of a JWK, no cookie key in clear', async () => {
    const { keys } = await loadProviderKeys(dataSource, CIPHER, 0);
    const text = await rowText();
    expect(JSON.parse(text)).toEqual({ sealed: expect.stringMatching(/^v1:k1:/) });
    for (const member of ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"']) expect(text).not.toContain(member);
    const jwk = keys.keys[0].jwk as Record<string, string>;
    for (const secret of [jwk.d, jwk.p, jwk.q, ...keys.cookieKeys]) expect(text).not.toContain(secret);
  });

  it('open with the same keys on another replica, and not with other keys, saying which key sealed them', async () => {
    const first = await loadProviderKeys(dataSource, CIPHER, 0);
    expect((await loadProviderKeys(dataSource, cipherOf({ ...KEY }), 0)).keys).toEqual(first.keys);
    const other = cipherOf({ id: 'k9', key: randomBytes(32).toString('base64') });
    await expect(loadProviderKeys(dataSource, other, 0)).rejects.toThrow(McpConfigurationError);
    await expect(loadProviderKeys(dataSource, other, 0)).rejects.toThrow(
      'the signing keys in mcp_oauth_provider_records do not open with the configured "encryptionKeys" (they were sealed with the key "k1")',
    );
  });

  it('are sealed again with a new first key, after which the old key may leave', async () => {
    const before = await loadProviderKeys(dataSource, CIPHER, 0);
    const next = { id: 'k2', key: randomBytes(32).toString('base64') };
    const rotated = await loadProviderKeys(dataSource, cipherOf(next, KEY), 0);
    expect(rotated.keys).toEqual(before.keys);
    expect(JSON.parse(await rowText()).sealed).toMatch(/^v1:k2:/);
    expect((await loadProviderKeys(dataSource, cipherOf(next), 0)).keys).toEqual(before.keys);
    await expect(loadProviderKeys(dataSource, CIPHER, 0)).rejects.toThrow('sealed with the key "k2"');
    // Back to k1 for the other tests.
    await loadProviderKeys(dataSource, cipherOf(KEY, next), 0);
  });

  it('refuse a row that is not sealed', async () => {
    const sealed = await rowText();
    await dataSource.query(
      `UPDATE mcp_oauth_provider_records SET payload = '{"keys":[]}' WHERE model = 'McpProviderKeys'`,
    );
    try {
      await expect(loadProviderKeys(dataSource, CIPHER, 0)).rejects.toThrow('(the row is not sealed)');
    } finally {
      await dataSource.query(`UPDATE mcp_oauth_provider_records SET payload = ? WHERE model = 'McpProviderKeys'`, [
        sealed,
      ]);
    }
  });

  it('rotate: nothing before the time, a published key before it signs, the old one dropped a token lifetime after', async () => {
    const keys = (await loadProviderKeys(dataSource, CIPHER, 0)).keys;
    const start = { ...keys, keys: [{ ...keys.keys[0], activeFromMs: 0 }] };
    expect(await rotatedKeys(start, 4_999, 10_000, 5000)).toBeNull();
    const published = (await rotatedKeys(start, 5000, 10_000, 5000))!;
    expect(published.keys.map((key) => key.activeFromMs)).toEqual([0, 10_000]);
    expect(signingKey(published, 9_999)).toBe(published.keys[0]);
    expect(await rotatedKeys(published, 9_999, 10_000, 5000)).toBeNull();
    expect(signingKey(published, 10_000)).toBe(published.keys[1]);
    expect(await rotatedKeys(published, 14_999, 10_000, 5000)).toBeNull();
    const dropped = (await rotatedKeys(published, 15_000, 10_000, 5000))!;
    expect(dropped.keys.map((key) => key.activeFromMs)).toEqual([10_000, 20_000]);
  });
});

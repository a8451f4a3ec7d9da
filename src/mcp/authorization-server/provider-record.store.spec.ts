import { DataSource } from 'typeorm';
import { MCP_ENTITIES } from '../persistence/entities';
import { TypeOrmProviderAdapter } from './provider-record.store';

/** The adapter on a real database (SQLite in memory), with a clock the test moves. */
describe('TypeOrmProviderAdapter', () => {
  let dataSource: DataSource;
  let now = new Date('2026-01-01T00:00:00Z');
  const clock = () => now;

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

  it('stores, finds by id, uid and user code, and keeps each model apart', async () => {
    const sessions = new TypeOrmProviderAdapter(dataSource, 'Session', clock);
    const codes = new TypeOrmProviderAdapter(dataSource, 'DeviceCode', clock);
    await sessions.upsert('s1', { uid: 'u1', accountId: 'alice' }, 60);
    await codes.upsert('s1', { userCode: 'ABCD-EFGH', grantId: 'g1' }, 60);
    expect(await sessions.find('s1')).toEqual({ uid: 'u1', accountId: 'alice' });
    expect(await sessions.findByUid('u1')).toEqual({ uid: 'u1', accountId: 'alice' });
    expect(await codes.findByUserCode('ABCD-EFGH')).toEqual({ userCode: 'ABCD-EFGH', grantId: 'g1' });
    expect(await codes.findByUid('u1')).toBeUndefined();
    await sessions.upsert('s1', { uid: 'u1', accountId: 'bob' });
    expect(await sessions.find('s1')).toEqual({ uid: 'u1', accountId: 'bob' });
    await sessions.destroy('s1');
    expect(await sessions.find('s1')).toBeUndefined();
    expect(await codes.find('s1')).toBeDefined();
  });

  it('never hands back an expired row, and deletes expired rows on demand', async () => {
    const tokens = new TypeOrmProviderAdapter(dataSource, 'AccessToken', clock);
    await tokens.upsert('t1', { grantId: 'g9' }, 10);
    await tokens.upsert('t2', { grantId: 'g9' }, 100);
    now = new Date(now.getTime() + 10_000);
    expect(await tokens.find('t1')).toBeUndefined();
    expect(await tokens.find('t2')).toEqual({ grantId: 'g9' });
    expect(await TypeOrmProviderAdapter.deleteExpired(dataSource, now)).toBe(0);
    expect(await TypeOrmProviderAdapter.deleteExpired(dataSource, new Date(now.getTime() + 1))).toBe(1);
  });

  it('stamps a consumed row once, and hands the stamp back as `consumed` (epoch seconds)', async () => {
    const codes = new TypeOrmProviderAdapter(dataSource, 'AuthorizationCode', clock);
    await codes.upsert('c1', { grantId: 'g2' }, 60);
    await codes.consume('c1');
    const stamped = Math.floor(now.getTime() / 1000);
    now = new Date(now.getTime() + 5000);
    await codes.consume('c1');
    expect(await codes.find('c1')).toEqual({ grantId: 'g2', consumed: stamped });
  });

  it('revokes every row of a grant in its model', async () => {
    const refresh = new TypeOrmProviderAdapter(dataSource, 'RefreshToken', clock);
    const access = new TypeOrmProviderAdapter(dataSource, 'AccessToken', clock);
    await refresh.upsert('r1', { grantId: 'g3' }, 60);
    await refresh.upsert('r2', { grantId: 'g3' }, 60);
    await refresh.upsert('r3', { grantId: 'g4' }, 60);
    await access.upsert('a1', { grantId: 'g3' }, 60);
    await refresh.revokeByGrantId('g3');
    expect(await refresh.find('r1')).toBeUndefined();
    expect(await refresh.find('r2')).toBeUndefined();
    expect(await refresh.find('r3')).toBeDefined();
    expect(await access.find('a1')).toBeDefined();
  });

  it('is a class oidc-provider instantiates per model', async () => {
    const Adapter = TypeOrmProviderAdapter.forDataSource(dataSource);
    const grants = new Adapter('Grant');
    await grants.upsert('g5', { accountId: 'carol' });
    expect(await grants.find('g5')).toEqual({ accountId: 'carol' });
  });
});

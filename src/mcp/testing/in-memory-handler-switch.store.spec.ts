import { storedHandlerName, storedPrincipalKey } from '../persistence/new-records';
import { InMemoryMcpHandlerSwitchStore } from './in-memory-handler-switch.store';

const row = (kind: string, name: string, principalKey: string | null) => ({
  mount: 'default',
  kind,
  name,
  principalKey,
  createdAt: expect.any(Date),
});

describe('InMemoryMcpHandlerSwitchStore', () => {
  it('keeps one switch per handler and principal (or everyone), on the default mount without settings', async () => {
    const store = new InMemoryMcpHandlerSwitchStore();
    await store.disable('tool', 'greet', null);
    await store.disable('tool', 'greet', null);
    await store.disable('tool', 'greet', ['bob', 'carol', 'bob']);
    await store.disable('tool', 'greet', ['carol']);
    await store.disable('prompt', 'greet', ['bob']);
    expect(await store.list()).toEqual([
      row('tool', 'greet', null),
      row('tool', 'greet', 'bob'),
      row('tool', 'greet', 'carol'),
      row('prompt', 'greet', 'bob'),
    ]);
  });

  it('enabling for principals lifts their own switches only; without principals every switch of that handler', async () => {
    const store = new InMemoryMcpHandlerSwitchStore({ mount: 'm1' });
    await store.disable('tool', 'greet', null);
    await store.disable('tool', 'greet', ['bob', 'carol']);
    await store.disable('resource', 'docs://a', ['bob']);
    await store.enable('tool', 'greet', ['bob', 'dave']);
    expect((await store.list()).map((r) => [r.mount, r.kind, r.name, r.principalKey])).toEqual([
      ['m1', 'tool', 'greet', null],
      ['m1', 'tool', 'greet', 'carol'],
      ['m1', 'resource', 'docs://a', 'bob'],
    ]);
    await store.enable('tool', 'greet', null);
    expect((await store.list()).map((r) => [r.kind, r.name, r.principalKey])).toEqual([
      ['resource', 'docs://a', 'bob'],
    ]);
    await store.enable('tool', 'greet', null);
    await store.enable('resource', 'docs://a', []);
    expect(store.switches).toHaveLength(1);
  });

  it('keeps long names and principal keys in their stored form, and finds them again by the originals', async () => {
    const store = new InMemoryMcpHandlerSwitchStore();
    const uri = `docs://${'a'.repeat(1100)}`;
    const key = 'k'.repeat(300);
    await store.disable('resource', uri, [key]);
    const [stored] = await store.list();
    expect(stored.name).toBe(storedHandlerName(uri));
    expect(stored.name).toHaveLength(1024);
    expect(stored.principalKey).toBe(storedPrincipalKey(key));
    expect(stored.principalKey).toHaveLength(255);
    await store.enable('resource', uri, [key]);
    expect(await store.list()).toEqual([]);
  });

  it('hands out copies', async () => {
    const store = new InMemoryMcpHandlerSwitchStore();
    await store.disable('tool', 'greet', null);
    (await store.list())[0].name = 'changed';
    store.switches[0].principalKey = 'changed';
    expect(await store.list()).toEqual([row('tool', 'greet', null)]);
  });
});

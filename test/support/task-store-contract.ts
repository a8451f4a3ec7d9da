import type { McpNewTask, McpTaskStore } from '../../src/mcp/persistence/interfaces/mcp-task-store.interface';

/** A new task of `principalKey` for the contract specs. */
export function newTaskFixture(id: string, principalKey = 'alice', ttlMs: number | null = 60_000): McpNewTask {
  return {
    id,
    principalKey,
    sessionId: 'session-1',
    toolName: 'report',
    argumentsDigest: 'a'.repeat(64),
    payload: {
      arguments: { n: 1 },
      meta: { progressToken: 7 },
      principal: { key: principalKey, label: principalKey, raw: null },
      protocolVersion: '2025-11-25',
      logLevel: null,
    },
    statusMessage: null,
    ttlMs,
    pollIntervalMs: 500,
  };
}

/**
 * The rules every `McpTaskStore` keeps, run by the spec of each store: a claim only from the
 * expected holder, nothing leaves a terminal status, lists are the owner's unexpired tasks.
 */
export function describeTaskStoreContract(
  name: string,
  storeOf: (mount: string) => McpTaskStore,
  reset: () => Promise<void> = async () => undefined,
): void {
  describe(`${name} (the McpTaskStore contract)`, () => {
    afterEach(reset);

    it('creates a working, unclaimed task that expires ttl after its creation, and reads it back', async () => {
      const store = storeOf('m1');
      const now = new Date('2026-01-01T00:00:00.000Z');
      const created = await store.create(newTaskFixture('t1'), now);
      const expected = {
        ...newTaskFixture('t1'),
        mount: 'm1',
        status: 'working',
        outcome: null,
        createdAt: now,
        updatedAt: now,
        expiresAt: new Date('2026-01-01T00:01:00.000Z'),
        startedAt: null,
        worker: null,
        attempt: 0,
      };
      expect(created).toEqual(expected);
      expect(await store.get('t1')).toEqual(expected);
      expect(await store.get('t2')).toBeNull();
      expect(await storeOf('m2').get('t1')).toBeNull();
    });

    it('claims once from nobody, then only from the holder named, adding one attempt each time', async () => {
      const store = storeOf('m1');
      await store.create(newTaskFixture('t1'));
      expect(await store.claim('t1', 'w1', null)).toBe(true);
      expect(await store.claim('t1', 'w2', null)).toBe(false);
      expect(await store.claim('t1', 'w2', 'w3')).toBe(false);
      expect(await store.claim('t1', 'w2', 'w1')).toBe(true);
      expect(await store.get('t1')).toMatchObject({ worker: 'w2', attempt: 2, startedAt: expect.any(Date) });
      expect((await store.unfinished()).map((task) => task.id)).toEqual(['t1']);
    });

    it('never leaves a terminal status: a second finish, a message or a claim after it change nothing', async () => {
      const store = storeOf('m1');
      await store.create(newTaskFixture('t1'));
      expect(await store.setMessage('t1', 'halfway')).toMatchObject({ statusMessage: 'halfway', status: 'working' });
      expect(await store.finish('t1', 'completed', undefined, { result: { content: [] } })).toMatchObject({
        status: 'completed',
        statusMessage: 'halfway',
        outcome: { result: { content: [] } },
      });
      expect(await store.finish('t1', 'cancelled', 'too late', { error: { code: -32603, message: 'x' } })).toBeNull();
      expect(await store.setMessage('t1', 'later')).toBeNull();
      expect(await store.claim('t1', 'w1', null)).toBe(false);
      expect(await store.get('t1')).toMatchObject({
        status: 'completed',
        statusMessage: 'halfway',
        outcome: { result: { content: [] } },
      });
      expect(await store.unfinished()).toEqual([]);
    });

    it('moves a task to input_required with its input requests and back to working; never once it is over', async () => {
      const store = storeOf('m1');
      await store.create(newTaskFixture('t1'));
      const later = new Date('2030-01-01T00:00:00.000Z');
      const requests = { 'name-1': { method: 'elicitation/create', params: { mode: 'form', message: 'Name?' } } };
      expect(await store.setInputRequests('t1', requests, later)).toMatchObject({
        status: 'input_required',
        outcome: { inputRequests: requests },
        updatedAt: later,
      });
      expect((await store.unfinished()).map((task) => [task.id, task.status])).toEqual([['t1', 'input_required']]);
      expect(await store.claim('t1', 'w2', null)).toBe(false);
      expect(await store.setInputRequests('t1', {})).toMatchObject({ status: 'working', outcome: null });
      expect(await store.setInputRequests('t1', requests)).toMatchObject({ status: 'input_required' });
      expect(await store.setInputRequests('t1', null)).toMatchObject({ status: 'working', outcome: null });
      await store.finish('t1', 'cancelled', undefined, { error: { code: -32603, message: 'x' } });
      expect(await store.setInputRequests('t1', requests)).toBeNull();
      expect(await store.get('t1')).toMatchObject({
        status: 'cancelled',
        outcome: { error: { code: -32603, message: 'x' } },
      });
      expect(await store.setInputRequests('no-such-task', requests)).toBeNull();
    });

    it("lists the owner's unexpired tasks, newest first, by offset and limit", async () => {
      const store = storeOf('m1');
      const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second));
      await store.create(newTaskFixture('a1'), at(1));
      await store.create(newTaskFixture('a2'), at(2));
      await store.create(newTaskFixture('a3', 'alice', null), at(3));
      await store.create(newTaskFixture('b1', 'bob'), at(4));
      await storeOf('m2').create(newTaskFixture('other-mount'), at(5));
      const now = at(10);
      expect((await store.list('alice', now, 0, 2)).map((task) => task.id)).toEqual(['a3', 'a2']);
      expect((await store.list('alice', now, 2, 2)).map((task) => task.id)).toEqual(['a1']);
      expect((await store.list('bob', now, 0, 10)).map((task) => task.id)).toEqual(['b1']);
      // a1 and a2 expire a minute after their creation; a3 never does.
      expect((await store.list('alice', new Date(at(62).getTime()), 0, 10)).map((task) => task.id)).toEqual(['a3']);
    });

    it("lists only one session's tasks of the owner when given the session", async () => {
      const store = storeOf('m1');
      const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second));
      await store.create({ ...newTaskFixture('s1'), sessionId: 'session-1' }, at(1));
      await store.create({ ...newTaskFixture('s2'), sessionId: 'session-2' }, at(2));
      await store.create({ ...newTaskFixture('none'), sessionId: null }, at(3));
      await store.create({ ...newTaskFixture('bob-s1', 'bob'), sessionId: 'session-1' }, at(4));
      const now = at(10);
      expect((await store.list('alice', now, 0, 10, 'session-1')).map((task) => task.id)).toEqual(['s1']);
      expect((await store.list('alice', now, 0, 10, 'session-2')).map((task) => task.id)).toEqual(['s2']);
      expect((await store.list('alice', now, 0, 10)).map((task) => task.id)).toEqual(['none', 's2', 's1']);
    });

    it("reads the owner's tasks among many ids at once, leaving out unknown ids, other owners and other mounts", async () => {
      const store = storeOf('m1');
      await store.create(newTaskFixture('a1'));
      await store.create(newTaskFixture('a2'));
      await store.create(newTaskFixture('b1', 'bob'));
      await storeOf('m2').create(newTaskFixture('a-other-mount'));
      const found = await store.getMany(['a2', 'nope', 'b1', 'a1', 'a-other-mount', 'a1'], 'alice');
      expect(found.map((task) => task.id).sort()).toEqual(['a1', 'a2']);
      expect(found.find((task) => task.id === 'a1')).toEqual(await store.get('a1'));
      expect(await store.getMany([], 'alice')).toEqual([]);
    });

    it('reads 70,000 ids in one call (more than a database takes as separate parameters)', async () => {
      const store = storeOf('m1');
      await store.create(newTaskFixture('needle'));
      const ids = Array.from({ length: 70_000 }, (_, i) => `hay-${i}`);
      ids.splice(35_000, 0, 'needle');
      expect((await store.getMany(ids, 'alice')).map((task) => task.id)).toEqual(['needle']);
    });

    it('counts the tasks of an owner that are neither over nor expired', async () => {
      const store = storeOf('m1');
      const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second));
      await store.create(newTaskFixture('working'), at(1));
      await store.create(newTaskFixture('asking', 'alice', null), at(1));
      await store.setInputRequests('asking', { 'k-1': { method: 'elicitation/create', params: {} } });
      await store.create(newTaskFixture('done'), at(1));
      await store.finish('done', 'completed', undefined, { result: { content: [] } });
      await store.create(newTaskFixture('cancelled'), at(1));
      await store.finish('cancelled', 'cancelled', undefined, null);
      await store.create(newTaskFixture('bob', 'bob'), at(1));
      await storeOf('m2').create(newTaskFixture('other-mount'), at(1));
      expect(await store.countOpen('alice', at(10))).toBe(2);
      expect(await store.countOpen('bob', at(10))).toBe(1);
      expect(await store.countOpen('carol', at(10))).toBe(0);
      // "working" expires a minute after its creation; "asking" never does.
      expect(await store.countOpen('alice', at(62))).toBe(1);
    });
  });
}

import { describeTaskStoreContract } from '../../../test/support/task-store-contract';
import { InMemoryMcpTaskStore } from './in-memory-task.store';

const shared = new Map<string, InMemoryMcpTaskStore>();

describeTaskStoreContract(
  'InMemoryMcpTaskStore',
  (mount) => {
    // One instance per mount, so the contract's second mount sees none of the first one's tasks.
    if (!shared.has(mount)) shared.set(mount, new InMemoryMcpTaskStore({ mount }));
    return shared.get(mount) as InMemoryMcpTaskStore;
  },
  async () => shared.clear(),
);

describe('InMemoryMcpTaskStore', () => {
  it('serves the default mount without settings and hands out copies', async () => {
    const store = new InMemoryMcpTaskStore();
    expect(store.mount).toBe('default');
    await store.create({
      id: 't',
      principalKey: 'k',
      sessionId: null,
      toolName: 'x',
      argumentsDigest: 'd',
      payload: {
        arguments: {},
        meta: null,
        principal: { key: 'k', label: 'k', raw: null },
        protocolVersion: 'v',
        logLevel: null,
      },
      statusMessage: null,
      ttlMs: null,
      pollIntervalMs: 1,
    });
    (store.tasks[0] as { status: string }).status = 'completed';
    expect(store.tasks[0].status).toBe('working');
    expect(store.tasks[0].expiresAt).toBeNull();
  });
});

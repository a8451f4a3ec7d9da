import type { McpPrincipal } from '../../interfaces/principal.interface';
import type {
  McpInboundSessionRecord,
  McpSessionStore,
} from '../../persistence/interfaces/mcp-session-store.interface';
import { InMemoryMcpSessionStore } from '../../testing/in-memory-session.store';
import { SessionTouches } from './session-touches';

const alice: McpPrincipal = { key: 'alice', label: 'alice', raw: null };

/** The in-memory store plus a `touch` that records each batch (what the TypeORM store writes in one UPDATE). */
class BatchRecordingStore extends InMemoryMcpSessionStore {
  readonly batches: string[][] = [];
  failWith: Error | null = null;

  async touch(sessions: McpInboundSessionRecord[]): Promise<void> {
    this.batches.push(sessions.map((session) => session.sessionId));
    if (this.failWith) throw this.failWith;
  }
}

describe('SessionTouches', () => {
  it('writes the touches queued together in one batch, each session once', async () => {
    const store = new BatchRecordingStore();
    const sessions = await Promise.all(
      [1, 2, 3].map(() =>
        store.open({ principal: alice, protocolVersion: '2025-11-25', clientInfo: null, clientCapabilities: null }),
      ),
    );
    const touches = new SessionTouches(store, { gone: () => undefined, failed: () => undefined });
    for (const session of [...sessions, sessions[0], sessions[0]]) touches.add(session, alice);
    await touches.idle();
    expect(store.batches).toEqual([sessions.map((session) => session.sessionId)]);
  });

  it('reports a failed batch with its sessions, and keeps working afterwards', async () => {
    const store = new BatchRecordingStore();
    const session = await store.open({
      principal: alice,
      protocolVersion: '2025-11-25',
      clientInfo: null,
      clientCapabilities: null,
    });
    const failed: string[] = [];
    const touches = new SessionTouches(store, {
      gone: () => undefined,
      failed: (records) => failed.push(...records.map((r) => r.sessionId)),
    });
    store.failWith = new Error('database down');
    touches.add(session, alice);
    await touches.idle();
    expect(failed).toEqual([session.sessionId]);
    store.failWith = null;
    touches.add(session, alice);
    await touches.idle();
    expect(store.batches).toHaveLength(2);
    expect(failed).toHaveLength(1);
  });

  it('uses find on a store without touch, and reports the sessions it no longer finds', async () => {
    const store: McpSessionStore = new InMemoryMcpSessionStore();
    const live = await store.open({
      principal: alice,
      protocolVersion: '2025-11-25',
      clientInfo: null,
      clientCapabilities: null,
    });
    const ended = await store.open({
      principal: alice,
      protocolVersion: '2025-11-25',
      clientInfo: null,
      clientCapabilities: null,
    });
    await store.terminate(ended);
    const found = jest.spyOn(store, 'find');
    const gone: string[] = [];
    const touches = new SessionTouches(store, {
      gone: (records) => gone.push(...records.map((r) => r.sessionId)),
      failed: () => undefined,
    });
    touches.add(live, alice);
    touches.add(ended, alice);
    await touches.idle();
    expect(found).toHaveBeenCalledTimes(2);
    expect(gone).toEqual([ended.sessionId]);
  });
});

import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { SessionCache } from './session-cache';

function record(sessionId: string, principalKey = 'alice', lastSeenAt = new Date(0)): McpInboundSessionRecord {
  return {
    id: `row-${sessionId}`,
    mount: 'default',
    sessionId,
    principalKey,
    principalLabel: principalKey,
    protocolVersion: '2025-11-25',
    clientInfo: null,
    clientCapabilities: null,
    logLevel: null,
    createdAt: new Date(0),
    lastSeenAt,
    terminatedAt: null,
  };
}

describe('SessionCache', () => {
  let now: number;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000_000;
  });

  it('serves a cached session to its principal only, and leaves it in place for the owner', () => {
    const cache = new SessionCache(1000, 10, clock);
    cache.put(record('s1'), cache.beginRead('s1'));
    expect(cache.get('s1', 'bob')).toBeUndefined();
    expect(cache.get('s1', 'alice')?.record.sessionId).toBe('s1');
    expect(cache.get('unknown', 'alice')).toBeUndefined();
  });

  it('expires an entry one TTL after the read started, however often it is used', () => {
    const cache = new SessionCache(1000, 10, clock);
    const read = cache.beginRead('s1');
    now += 300; // the store took 300 ms to answer
    cache.put(record('s1'), read);
    now += 699;
    expect(cache.get('s1', 'alice')).toBeDefined();
    now += 1;
    expect(cache.get('s1', 'alice')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('expires a session cached without a read (just opened) one TTL after it was put', () => {
    const cache = new SessionCache(500, 10, clock);
    cache.put(record('s1'));
    now += 499;
    expect(cache.get('s1', 'alice')).toBeDefined();
    now += 1;
    expect(cache.get('s1', 'alice')).toBeUndefined();
  });

  it('holds at most maxEntries, dropping the least recently used first', () => {
    const cache = new SessionCache(60_000, 3, clock);
    for (const id of ['a', 'b', 'c']) cache.put(record(id));
    expect(cache.get('a', 'alice')).toBeDefined(); // a is now the most recently used
    cache.put(record('d'));
    expect(cache.size).toBe(3);
    expect(cache.get('b', 'alice')).toBeUndefined();
    expect(['a', 'c', 'd'].map((id) => !!cache.get(id, 'alice'))).toEqual([true, true, true]);
    for (let i = 0; i < 1000; i++) cache.put(record(`many-${i}`));
    expect(cache.size).toBe(3);
  });

  it('keeps the least-recently-used order through runs of hits on one session, forgets and evictions', () => {
    const cache = new SessionCache(60_000, 3, clock);
    for (const id of ['a', 'b', 'c']) cache.put(record(id));
    for (let i = 0; i < 5; i++) expect(cache.get('a', 'alice')).toBeDefined(); // a run of hits: a is newest
    expect(cache.get('b', 'alice')).toBeDefined(); // then b: order c, a, b
    expect(cache.get('b', 'alice')).toBeDefined();
    cache.put(record('d')); // evicts c
    expect(cache.get('c', 'alice')).toBeUndefined();
    cache.forget('d'); // the newest is gone: a hit on b must still make b newest
    expect(cache.get('a', 'alice')).toBeDefined(); // order b, a
    expect(cache.get('b', 'alice')).toBeDefined(); // order a, b
    cache.put(record('e'));
    cache.put(record('f')); // evicts a
    expect(['a', 'b', 'e', 'f'].map((id) => !!cache.get(id, 'alice'))).toEqual([false, true, true, true]);
  });

  it('drops abandoned sessions once their TTL is over, at the next put, well below maxEntries', () => {
    const cache = new SessionCache(1000, 10_000, clock);
    for (let i = 0; i < 100; i++) cache.put(record(`abandoned-${i}`));
    cache.put(record('kept'));
    now += 600;
    cache.put(record('fresh'));
    expect(cache.get('kept', 'alice')).toBeDefined(); // now the most recently used, behind 'fresh'
    expect(cache.size).toBe(102); // nothing has expired yet
    now += 400; // the abandoned ones and 'kept' (put 1000 ms ago) are over their TTL
    cache.put(record('later'));
    expect(cache.size).toBe(3); // 'kept' sits behind 'fresh', which has not expired: it waits for its next get
    expect(cache.get('kept', 'alice')).toBeUndefined();
    expect(cache.size).toBe(2);
    expect(['fresh', 'later'].map((id) => !!cache.get(id, 'alice'))).toEqual([true, true]);
  });

  it('forgets a session, and with a principal key only when the session is bound to it', () => {
    const cache = new SessionCache(60_000, 10, clock);
    cache.put(record('s1'));
    cache.forget('s1', 'mallory');
    expect(cache.get('s1', 'alice')).toBeDefined();
    cache.forget('s1', 'alice');
    expect(cache.get('s1', 'alice')).toBeUndefined();
    cache.put(record('s2'));
    cache.forget('s2');
    expect(cache.get('s2', 'alice')).toBeUndefined();
  });

  it('does not cache what a read returns when the session was forgotten while the read was in flight', () => {
    const cache = new SessionCache(60_000, 10, clock);
    const early = cache.beginRead('s1');
    const other = cache.beginRead('s2');
    cache.forget('s1'); // e.g. a DELETE on another replica, committed after the read saw the row
    cache.put(record('s1'), early);
    cache.put(record('s2'), other);
    expect(cache.get('s1', 'alice')).toBeUndefined();
    expect(cache.get('s2', 'alice')).toBeDefined();
    // A read started after the end is cached again (the store answered it after the end).
    cache.put(record('s1'), cache.beginRead('s1'));
    expect(cache.get('s1', 'alice')).toBeDefined();
  });

  it('clear() drops every entry and spoils every read in flight', () => {
    const cache = new SessionCache(60_000, 10, clock);
    cache.put(record('s1'));
    const read = cache.beginRead('s2');
    cache.clear();
    cache.put(record('s2'), read);
    expect(cache.size).toBe(0);
  });

  it('starts the touch clock at the lastSeenAt the store returned', () => {
    const cache = new SessionCache(60_000, 10, clock);
    cache.put(record('s1', 'alice', new Date(now - 400)), cache.beginRead('s1'));
    expect(cache.get('s1', 'alice')).toMatchObject({ touchedAt: now - 400, usedAt: now });
  });
});

import { isSessionIdle, isSessionLive, sessionIdleCutoff, sessionTouchIntervalMs } from './session-liveness';

describe('session idle rule', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  const ttl = 60_000;
  const seen = (msAgo: number) => new Date(now - msAgo);

  it('puts the cutoff one TTL before now', () => {
    expect(sessionIdleCutoff(ttl, now)).toEqual(new Date(now - ttl));
  });

  it('keeps a session seen exactly one TTL ago, and ends one seen a millisecond earlier', () => {
    expect(isSessionIdle(seen(0), ttl, now)).toBe(false);
    expect(isSessionIdle(seen(ttl), ttl, now)).toBe(false);
    expect(isSessionIdle(seen(ttl + 1), ttl, now)).toBe(true);
  });

  it('agrees with the SQL form (last_seen_at >= cutoff) on both sides of the boundary', () => {
    for (const msAgo of [0, 1, ttl - 1, ttl, ttl + 1, 10 * ttl]) {
      const sqlLive = seen(msAgo).getTime() >= sessionIdleCutoff(ttl, now).getTime();
      expect(isSessionIdle(seen(msAgo), ttl, now)).toBe(!sqlLive);
    }
  });

  it('treats a terminated session as not live, however recent', () => {
    expect(isSessionLive({ lastSeenAt: seen(0), terminatedAt: null }, ttl, now)).toBe(true);
    expect(isSessionLive({ lastSeenAt: seen(0), terminatedAt: seen(0) }, ttl, now)).toBe(false);
    expect(isSessionLive({ lastSeenAt: seen(ttl + 1), terminatedAt: null }, ttl, now)).toBe(false);
  });

  it('uses the current time by default', () => {
    expect(isSessionLive({ lastSeenAt: new Date(), terminatedAt: null }, ttl)).toBe(true);
    expect(isSessionLive({ lastSeenAt: new Date(Date.now() - 2 * ttl), terminatedAt: null }, ttl)).toBe(false);
  });
});

describe('session touch interval', () => {
  it('is a twentieth of the idle TTL, at most one second and at least one millisecond', () => {
    expect(sessionTouchIntervalMs(3_600_000)).toBe(1000);
    expect(sessionTouchIntervalMs(3000)).toBe(150);
    expect(sessionTouchIntervalMs(10)).toBe(1);
  });

  it('stays far below the idle TTL whatever the TTL', () => {
    for (const ttl of [20, 1000, 3000, 20_000, 60_000, 3_600_000, 86_400_000])
      expect(2 * sessionTouchIntervalMs(ttl)).toBeLessThanOrEqual(ttl / 10);
  });
});

import { McpMemoryRateCounter, type RateBudget } from './rate-counter';

const budget = (key: string, limit: number, windowMs = 1000): RateBudget => ({ key, limit, windowMs });

describe('McpMemoryRateCounter', () => {
  it('admits `limit` calls in a window, then refuses with the time until the window closes', async () => {
    let now = 10_000;
    const counter = new McpMemoryRateCounter(() => now);
    const verdicts = [];
    for (let i = 0; i < 3; i++) {
      verdicts.push(await counter.take([budget('a', 2)]));
      now += 100;
    }
    expect(verdicts).toEqual([{ allowed: true }, { allowed: true }, { allowed: false, index: 0, retryAfterMs: 800 }]);
  });

  it('opens a new window once the last one closed', () => {
    let now = 0;
    const counter = new McpMemoryRateCounter(() => now);
    expect(counter.takeNow([budget('a', 1)])).toEqual({ allowed: true });
    now = 999;
    expect(counter.takeNow([budget('a', 1)])).toMatchObject({ allowed: false, retryAfterMs: 1 });
    now = 1000;
    expect(counter.takeNow([budget('a', 1)])).toEqual({ allowed: true });
    expect(counter.takeNow([budget('a', 1)])).toMatchObject({ allowed: false, retryAfterMs: 1000 });
  });

  it('counts a call in every budget or in none: a spent budget leaves the others untouched', () => {
    const counter = new McpMemoryRateCounter(() => 0);
    expect(counter.takeNow([budget('mount', 10), budget('tool', 1)])).toEqual({ allowed: true });
    // The tool's budget is spent: the mount's is not charged for the refused calls.
    for (let i = 0; i < 5; i++)
      expect(counter.takeNow([budget('mount', 10), budget('tool', 1)])).toMatchObject({ allowed: false, index: 1 });
    const others = [];
    for (let i = 0; i < 10; i++) others.push(counter.takeNow([budget('mount', 10)]).allowed);
    expect(others).toEqual([...Array(9).fill(true), false]);
  });

  it('keeps budgets apart by key', () => {
    const counter = new McpMemoryRateCounter(() => 0);
    expect(counter.takeNow([budget('alice', 1)]).allowed).toBe(true);
    expect(counter.takeNow([budget('bob', 1)]).allowed).toBe(true);
    expect(counter.takeNow([budget('alice', 1)]).allowed).toBe(false);
  });

  it('forgets closed windows when the map grows, so it holds only the windows open now', () => {
    let now = 0;
    const counter = new McpMemoryRateCounter(() => now);
    for (let i = 0; i < 1023; i++) counter.takeNow([budget(`caller-${i}`, 1, 10)]);
    expect(counter.size).toBe(1023);
    now = 10; // every window above is closed
    counter.takeNow([budget('late', 1, 10)]);
    expect(counter.size).toBe(1);
  });
});

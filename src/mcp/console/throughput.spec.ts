import { isFailedEvent, nearestRank, throughputOf } from './throughput';

describe('throughputOf', () => {
  const start = Date.UTC(2026, 0, 1, 12, 0);

  it('counts requests and failures per minute and takes the nearest-rank p50 and p95 of their durations', () => {
    const durations = Array.from({ length: 20 }, (_, i) => i + 1); // 1..20 ms in minute 0
    const samples = [
      ...durations.map((durationMs, i) => ({ at: start + i * 1000, durationMs, failed: i < 3 })),
      { at: start + 2 * 60_000 + 59_999, durationMs: 7 },
    ];
    const series = throughputOf(samples, start, 3);
    expect(series.t).toEqual([start / 1000, start / 1000 + 60, start / 1000 + 120]);
    expect(series.count).toEqual([20, 0, 1]);
    expect(series.errors).toEqual([3, 0, 0]);
    expect(series.p50).toEqual([10, null, 7]);
    expect(series.p95).toEqual([19, null, 7]);
    expect(series.truncated).toBe(false);
  });

  it('ignores samples outside the window and passes the truncation flag on', () => {
    const series = throughputOf(
      [
        { at: start - 1, durationMs: 5 },
        { at: start + 60_000, durationMs: 5 },
      ],
      start,
      1,
      true,
    );
    expect(series.count).toEqual([0]);
    expect(series.p50).toEqual([null]);
    expect(series.truncated).toBe(true);
  });
});

describe('nearestRank', () => {
  it('is null without values and picks the ceil(p·n)-th value otherwise', () => {
    expect(nearestRank([], 0.5)).toBeNull();
    expect(nearestRank([4], 0.95)).toBe(4);
    expect(nearestRank([1, 2, 3, 4], 0.5)).toBe(2);
    expect(nearestRank([1, 2, 3, 4], 0.95)).toBe(4);
    expect(nearestRank([1, 2, 3, 4], 0)).toBe(1);
  });
});

describe('isFailedEvent', () => {
  it('is a failure with a JSON-RPC error code, an isError result or an HTTP status of 400 and up', () => {
    expect(isFailedEvent({ errorCode: null, isError: false, status: 200 })).toBe(false);
    expect(isFailedEvent({ errorCode: null, isError: false, status: null })).toBe(false);
    expect(isFailedEvent({ errorCode: null, isError: false, status: 399 })).toBe(false);
    expect(isFailedEvent({ errorCode: -32601, isError: false, status: 200 })).toBe(true);
    expect(isFailedEvent({ errorCode: null, isError: true, status: 200 })).toBe(true);
    expect(isFailedEvent({ errorCode: null, isError: false, status: 400 })).toBe(true);
  });
});

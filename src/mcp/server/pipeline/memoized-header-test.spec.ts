import { memoizedHeaderTest } from './memoized-header-test';

describe('memoizedHeaderTest', () => {
  function counted() {
    const seen: string[] = [];
    const test = memoizedHeaderTest((value) => {
      seen.push(value);
      return value.startsWith('application/json');
    });
    return { test, seen };
  }

  it('answers as the test does, and tests a repeated value once', () => {
    const { test, seen } = counted();
    expect(test('application/json')).toBe(true);
    expect(test('application/json')).toBe(true);
    expect(test('text/plain')).toBe(false);
    expect(test('text/plain')).toBe(false);
    expect(seen).toEqual(['application/json', 'text/plain']);
  });

  it('answers false for a missing or empty header without testing it', () => {
    const { test, seen } = counted();
    expect(test(undefined)).toBe(false);
    expect(test('')).toBe(false);
    expect(seen).toEqual([]);
  });

  it('does not keep long values, and starts over past its bound', () => {
    const { test, seen } = counted();
    const long = `application/json;${'x'.repeat(300)}`;
    expect(test(long)).toBe(true);
    expect(test(long)).toBe(true);
    expect(seen).toHaveLength(2);

    for (let i = 0; i < 64; i++) test(`text/v${i}`);
    seen.length = 0;
    test('text/v0'); // still kept: 64 entries fit
    expect(seen).toEqual([]);
    test('text/v64'); // the 65th starts over
    test('text/v1');
    expect(seen).toEqual(['text/v64', 'text/v1']);
  });
});

import { TokenAnswerCache, tokenDigest } from './token-answer-cache';

describe('TokenAnswerCache', () => {
  it('keeps an answer until its deadline, then forgets it', () => {
    const cache = new TokenAnswerCache<string>(10);
    cache.set('k', 'v', 1_000);
    expect(cache.get('k', 999)).toBe('v');
    expect(cache.get('k', 1_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never holds more than its bound, dropping the oldest first', () => {
    const cache = new TokenAnswerCache<number>(100);
    for (let i = 0; i < 10_000; i++) cache.set(`k${i}`, i, Number.MAX_SAFE_INTEGER);
    expect(cache.size).toBe(100);
    expect(cache.get('k9899', 0)).toBeUndefined();
    expect(cache.get('k9900', 0)).toBe(9900);
  });

  it('keeps nothing with a bound of 0', () => {
    const cache = new TokenAnswerCache<number>(0);
    cache.set('k', 1, Number.MAX_SAFE_INTEGER);
    expect(cache.size).toBe(0);
  });

  it('a key set again counts as the newest', () => {
    const cache = new TokenAnswerCache<number>(2);
    cache.set('a', 1, 10);
    cache.set('b', 2, 10);
    cache.set('a', 3, 10);
    cache.set('c', 4, 10);
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)]).toEqual([3, undefined, 4]);
  });

  it('keys by a digest that does not contain the token', () => {
    const token = 'secret-token-value';
    expect(tokenDigest(token)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenDigest(token)).not.toContain(token);
    expect(tokenDigest(token)).toBe(tokenDigest(token));
  });
});

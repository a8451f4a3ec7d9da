import { MAX_COMPLETION_VALUES, completionArguments, toCompletion } from './completion-values';

const many = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

describe('toCompletion', () => {
  it('passes a short list through with its size as total and no more', () => {
    expect(toCompletion(['python', 'pytorch'])).toEqual({ values: ['python', 'pytorch'], total: 2, hasMore: false });
  });

  it('keeps exactly 100 values without announcing more', () => {
    expect(toCompletion(many(100))).toEqual({ values: many(100), total: 100, hasMore: false });
  });

  it('cuts a longer list to the first 100, keeping the real total and announcing more', () => {
    const completion = toCompletion(many(250));
    expect(completion.values).toHaveLength(MAX_COMPLETION_VALUES);
    expect(completion.values[0]).toBe('v0');
    expect(completion.values[99]).toBe('v99');
    expect(completion.total).toBe(250);
    expect(completion.hasMore).toBe(true);
  });

  it("keeps a completer's own total and hasMore when it knows more than it returned", () => {
    expect(toCompletion({ values: ['a', 'b'], total: 40, hasMore: true })).toEqual({
      values: ['a', 'b'],
      total: 40,
      hasMore: true,
    });
    expect(toCompletion({ values: ['a'], total: 3 })).toEqual({ values: ['a'], total: 3, hasMore: true });
  });

  it('cuts an oversized list object too, and ignores a total smaller than what was returned', () => {
    expect(toCompletion({ values: many(101), total: 5, hasMore: false })).toEqual({
      values: many(100),
      total: 101,
      hasMore: true,
    });
  });

  it('answers an empty list with no values', () => {
    expect(toCompletion([])).toEqual({ values: [], total: 0, hasMore: false });
  });

  it.each([
    ['a string', 'python'],
    ['undefined', undefined],
    ['non-string values', [1, 2]],
    ['an object without values', { total: 1 }],
  ])('rejects %s', (_label, returned) => {
    expect(() => toCompletion(returned)).toThrow(/completer must return/);
  });
});

describe('completionArguments', () => {
  it('passes string arguments through and drops anything else', () => {
    expect(completionArguments({ arguments: { language: 'python', n: 3, x: null } })).toEqual({ language: 'python' });
  });

  it.each([[undefined], [{}], [{ arguments: ['a'] }], ['text']])('gives {} for %p', (context) => {
    expect(completionArguments(context)).toEqual({});
  });
});

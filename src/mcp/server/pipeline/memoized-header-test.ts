/** Header values longer than this are tested every time, not remembered. */
const MEMO_MAX_LENGTH = 256;
/** How many distinct header values a test remembers before it starts over. */
const MEMO_MAX_ENTRIES = 64;

/**
 * A header test that remembers its answers: a client sends the same `Accept` and `Content-Type`
 * on every request, so the header is split and lower-cased once, not per request. Bounded in
 * entries and in the length of what it keeps; an empty or missing header is false.
 */
export function memoizedHeaderTest(test: (value: string) => boolean): (value: string | undefined) => boolean {
  const answers = new Map<string, boolean>();
  return (value) => {
    if (!value) return false;
    const known = answers.get(value);
    if (known !== undefined) return known;
    const answer = test(value);
    if (value.length <= MEMO_MAX_LENGTH) {
      if (answers.size >= MEMO_MAX_ENTRIES) answers.clear();
      answers.set(value, answer);
    }
    return answer;
  };
}

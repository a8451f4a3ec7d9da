/**
 * Most errors a validation message lists. The message becomes a tool result and an audit row, and
 * a client can send arguments that break a rule once per array item: past this many, the message
 * gives the count (or says that more were not looked for) instead of the errors.
 */
export const MAX_LISTED_ERRORS = 10;

/** Most characters of one listed error (a property name or a path may be as long as the body). */
export const MAX_ERROR_CHARS = 200;

/**
 * Most JSON values (objects, arrays and scalars, counted depth first) an argument value may hold
 * for a failing validation to look for every error in it. Looking for all errors keeps one error
 * object per failing value in memory, so a larger value reports the first error only.
 */
export const MAX_VALUES_FOR_ALL_ERRORS = 1000;

/** `text` cut to `MAX_ERROR_CHARS`, with an ellipsis when cut. */
function cut(text: string): string {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}

/**
 * The message of a failed validation: at most `MAX_LISTED_ERRORS` errors, each cut to
 * `MAX_ERROR_CHARS`, then how many there were in all, or `unlisted` (why the others were not
 * looked for). `errors` is walked once, to count it; only the listed ones are kept.
 */
export function validationMessage(errors: Iterable<string>, unlisted?: string): string {
  const listed: string[] = [];
  let total = 0;
  for (const error of errors) {
    if (total < MAX_LISTED_ERRORS) listed.push(cut(error));
    total++;
  }
  const tail = total > listed.length ? ` (${listed.length} of ${total} errors listed)` : '';
  return `${listed.join('; ')}${tail}${unlisted ? `; ${unlisted}` : ''}`;
}

/**
 * True when `value` holds at most `max` JSON values (itself included). Stops counting at `max`,
 * so its cost does not depend on the size of the value.
 */
export function holdsAtMost(value: unknown, max: number): boolean {
  const pending: unknown[] = [value];
  let seen = 0;
  while (pending.length) {
    const next = pending.pop();
    if (++seen > max) return false;
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) {
      if (seen + pending.length + next.length > max) return false;
      for (const child of next) pending.push(child);
      continue;
    }
    for (const key in next) {
      if (!Object.prototype.hasOwnProperty.call(next, key)) continue;
      if (seen + pending.length >= max) return false;
      pending.push((next as Record<string, unknown>)[key]);
    }
  }
  return true;
}

/** Thrown at boot when the module is configured in a way that cannot work; the message says how to fix it. */
export class McpConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigurationError';
  }
}

/**
 * The keys of an options type, listed once: the mapped type makes the compiler reject a list
 * that misses a key of `T` or names one it does not have, so the list cannot drift from the
 * interface.
 */
export function optionKeys<T>(keys: { [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(keys);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

/** The known key a mistyped one most likely meant: a prefix of it (`timeout` → `timeoutMs`) or a near spelling. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const prefixed = known.find((k) => k.toLowerCase().startsWith(lower) || lower.startsWith(k.toLowerCase()));
  if (prefixed && lower.length >= 3) return prefixed;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (distance <= Math.max(2, Math.floor(candidate.length / 3)) && (!best || distance < best.distance))
      best = { key: candidate, distance };
  }
  return best?.key;
}

/** The closest key of a nested group, as `group.key`. */
function closestNested(key: string, nested: Readonly<Record<string, readonly string[]>>): string | undefined {
  for (const [group, keys] of Object.entries(nested)) {
    const guess = keys.includes(key) ? key : closest(key, keys);
    if (guess) return `${group}.${guess}`;
  }
  return undefined;
}

/**
 * Refuses a key of an options object that nothing reads: a `timeout` written for `timeoutMs`
 * would otherwise be ignored without a word. The message names the closest known key and lists
 * them all, e.g. `MCP server "x": unknown option "timeout" (did you mean "timeoutMs"? known: ...)`.
 * Values that are not plain objects are left to the checks of their own option.
 * @param where what the options belong to, e.g. `MCP server "x"` or `McpClientModule option "queue"`.
 * @param nested the keys of nested groups, by group: a key that belongs one level down (a top-level
 *   `maxBodyBytes` of `advanced`) is suggested with its group, `did you mean "advanced.maxBodyBytes"?`.
 * @throws McpConfigurationError
 */
export function assertKnownOptions(
  value: unknown,
  known: readonly string[],
  where: string,
  nested: Readonly<Record<string, readonly string[]>> = {},
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const guess = closest(key, known) ?? closestNested(key, nested);
    const hint = guess ? `did you mean "${guess}"? ` : '';
    throw new McpConfigurationError(`${where}: unknown option "${key}" (${hint}known: ${known.join(', ')})`);
  }
}

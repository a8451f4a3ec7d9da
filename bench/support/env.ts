/** A progress line on stderr, so a bench's report on stdout stays clean to pipe. */
export function progress(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** The positive integer in environment variable `name`, or `fallback` when unset; anything else stops the run naming the variable. */
export function positiveIntegerEnv(name: string, fallback: number): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name}: "${text}" is not a positive integer`);
  return value;
}

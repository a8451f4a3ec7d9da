import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `probe` until it returns a value other than undefined, or fails with `what` once the
 * deadline passed. The deadline only bounds the wait: no assertion is made on elapsed time.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  deadlineMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
    await delay(everyMs);
  }
}

/** Waits until at least `ms` milliseconds have passed since `since` (a Date.now() reading). */
export async function waitUntilPast(since: number, ms: number): Promise<void> {
  const remaining = since + ms - Date.now();
  if (remaining > 0) await delay(remaining);
}

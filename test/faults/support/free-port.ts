import { freeLoopbackPort } from '../../support/child-process';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, below the ephemeral range (see
 * `freeLoopbackPort`): the servers of these suites stop and start again on their port.
 */
export function freePort(): Promise<number> {
  return freeLoopbackPort();
}

/** Polls `check` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a failed attempt may reject with anything
      throw new Error(`Gave up waiting for ${what}${last ? `: ${(last as Error).message ?? String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

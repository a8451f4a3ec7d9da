/** Why a wait on a `StdioDeadline` ended early. */
export class StdioDeadlineExceeded extends Error {
  constructor(readonly aborted: boolean) {
    super(aborted ? 'aborted' : 'deadline passed');
    this.name = 'StdioDeadlineExceeded';
  }
}

/**
 * The one deadline of a deliver, shared by every step (pool wait, spawn, handshake, request), and
 * the caller's abort signal.
 */
export class StdioDeadline {
  /** When the call must be over, as `Date.now()` milliseconds. */
  readonly at: number;

  constructor(
    /** The call's budget in ms. */
    readonly timeoutMs: number,
    /** The caller's abort signal, if any. */
    readonly signal?: AbortSignal,
    /** The caller's absolute deadline over every attempt, when earlier than `timeoutMs` from now. */
    deadlineAt?: number,
  ) {
    const own = Date.now() + timeoutMs;
    this.at = typeof deadlineAt === 'number' && Number.isFinite(deadlineAt) ? Math.min(own, deadlineAt) : own;
  }

  /** True once the signal has aborted. */
  get aborted(): boolean {
    return this.signal?.aborted === true;
  }

  /** Throws `StdioDeadlineExceeded` when the deadline passed or the signal aborted. */
  check(): void {
    if (this.aborted) throw new StdioDeadlineExceeded(true);
    if (Date.now() >= this.at) throw new StdioDeadlineExceeded(false);
  }

  /** Settles like `promise`, or rejects with `StdioDeadlineExceeded` when time runs out first. */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.aborted) return reject(new StdioDeadlineExceeded(true));
      const onAbort = (): void => {
        cleanup();
        reject(new StdioDeadlineExceeded(true));
      };
      const timer = setTimeout(
        () => {
          cleanup();
          reject(new StdioDeadlineExceeded(false));
        },
        Math.max(0, this.at - Date.now()),
      );
      const cleanup = (): void => {
        clearTimeout(timer);
        this.signal?.removeEventListener('abort', onAbort);
      };
      this.signal?.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          cleanup();
          resolve(value);
        },
        (error: unknown) => {
          cleanup();
          reject(error);
        },
      );
    });
  }
}

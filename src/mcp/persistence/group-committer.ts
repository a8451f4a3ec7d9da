interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * How a committer isolates the items a failed batch held, so one item the database refuses fails
 * alone instead of failing its whole batch.
 */
export interface GroupCommitIsolation<T> {
  /** True when the failure may be caused by one item (a refused value), not by the database being gone. */
  isRefusal(error: unknown): boolean;
  /** The error an item rejects with when the database refused it on its own. */
  refused(item: T, error: unknown): unknown;
}

/**
 * Group commit: callers submit one item each and wait for its own result, while the writes go
 * to the database many at a time. Items that arrive while a batch is in flight form the next
 * batch, so a lone caller pays one round trip and a crowd shares them.
 *
 * With an `isolation`, a batch that fails with a refusal is written again one item at a time, so
 * only the items the database refuses on their own fail. A failure that is not a refusal (the
 * database is unreachable) fails the batch at once: retrying it item by item would only multiply
 * the waiting.
 */
export class GroupCommitter<T, R> {
  private queue: Pending<T, R>[] = [];
  private lanes = 0;
  private scheduled = false;
  private writing = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
    /** Batches in flight at once: more lanes trade a little batching for less waiting. */
    private readonly maxLanes = 2,
    private readonly isolation?: GroupCommitIsolation<T>,
  ) {}

  /** Items submitted and not committed (or failed) yet: waiting for a batch or in a batch in flight. */
  get backlog(): number {
    return this.queue.length + this.writing;
  }

  /** Resolves once every item submitted so far was committed or failed (at once when none is pending). */
  idle(): Promise<void> {
    if (this.backlog === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Queues one item; resolves with its result once the batch holding it is committed. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.lanes < this.maxLanes) {
        this.scheduled = true;
        // Let the I/O callbacks that are already due submit their items into the same batch.
        setImmediate(() => {
          this.scheduled = false;
          if (this.queue.length && this.lanes < this.maxLanes) void this.drain();
        });
      }
    });
  }

  private async drain(): Promise<void> {
    this.lanes++;
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.writing += batch.length;
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        if (!this.isolation?.isRefusal(error)) batch.forEach((p) => p.reject(error));
        else if (batch.length === 1) batch[0].reject(this.isolation.refused(batch[0].item, error));
        else await this.oneByOne(batch, this.isolation);
      } finally {
        this.writing -= batch.length;
      }
    }
    this.lanes--;
    if (this.backlog === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private async oneByOne(batch: Pending<T, R>[], isolation: GroupCommitIsolation<T>): Promise<void> {
    for (const pending of batch) {
      try {
        const [result] = await this.flush([pending.item]);
        pending.resolve(result);
      } catch (error) {
        pending.reject(isolation.isRefusal(error) ? isolation.refused(pending.item, error) : error);
      }
    }
  }
}

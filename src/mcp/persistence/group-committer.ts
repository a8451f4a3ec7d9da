import { InFlightSet } from '../in-flight-set';

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
  /** When the caller stops waiting (`performance.now()` ms); Infinity without a deadline. */
  due: number;
  /** Settled by the deadline: its batch's result, when it comes, is for nobody. */
  expired: boolean;
}

/**
 * How long a caller waits for its item, from `submit`, before it rejects with `error()`; the
 * item may still be written later (its batch is already on its way). One timer serves every
 * pending item: it is armed for the oldest one, so a submit costs no timer of its own.
 */
export interface GroupCommitDeadline {
  /** The wait, in milliseconds. */
  ms: number;
  /** The error a caller whose wait ran out rejects with. */
  error(): unknown;
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
  /** The batches being written now (each in submission order). */
  private readonly inFlight = new InFlightSet<Pending<T, R>[]>();
  private deadlineTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
    /** Batches in flight at once: more lanes trade a little batching for less waiting. */
    private readonly maxLanes = 2,
    private readonly isolation?: GroupCommitIsolation<T>,
    private readonly deadline?: GroupCommitDeadline,
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
      const due = this.deadline ? performance.now() + this.deadline.ms : Infinity;
      this.queue.push({ item, resolve, reject, due, expired: false });
      if (this.deadline && !this.deadlineTimer) this.armDeadline(due);
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
      this.inFlight.add(batch);
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        if (!this.isolation?.isRefusal(error)) batch.forEach((p) => p.reject(error));
        else if (batch.length === 1) batch[0].reject(this.isolation.refused(batch[0].item, error));
        else await this.oneByOne(batch, this.isolation);
      } finally {
        this.writing -= batch.length;
        this.inFlight.delete(batch);
      }
    }
    this.lanes--;
    if (this.backlog === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Arms the one deadline timer for `due`; it is not cleared when items settle, only re-armed when it fires. */
  private armDeadline(due: number): void {
    this.deadlineTimer = setTimeout(() => this.expire(), Math.max(0, due - performance.now()));
    this.deadlineTimer.unref?.();
  }

  /** Rejects every pending item whose wait ran out, then arms the timer for the oldest one left. */
  private expire(): void {
    this.deadlineTimer = null;
    const deadline = this.deadline as GroupCommitDeadline;
    const now = performance.now();
    let next = Infinity;
    // Submission order is deadline order: the queue is expired from its head.
    while (this.queue.length && this.queue[0].due <= now) {
      const pending = this.queue.shift() as Pending<T, R>;
      pending.reject(deadline.error());
    }
    if (this.queue.length) next = this.queue[0].due;
    for (const batch of this.inFlight) {
      for (const pending of batch) {
        if (pending.expired) continue;
        if (pending.due > now) {
          next = Math.min(next, pending.due);
          break;
        }
        pending.expired = true;
        pending.reject(deadline.error());
      }
    }
    if (next !== Infinity) this.armDeadline(next);
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

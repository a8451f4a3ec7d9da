interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: callers submit one item each and wait for its own result, while the writes go
 * to the database many at a time. Items that arrive while a batch is in flight form the next
 * batch, so a lone caller pays one round trip and a crowd shares them.
 */
export class GroupCommitter<T, R> {
  private queue: Pending<T, R>[] = [];
  private lanes = 0;
  private scheduled = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
    /** Batches in flight at once: more lanes trade a little batching for less waiting. */
    private readonly maxLanes = 2,
  ) {}

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
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        batch.forEach((p) => p.reject(error));
      }
    }
    this.lanes--;
  }
}

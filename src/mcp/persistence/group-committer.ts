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
  private running = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
  ) {}

  /** Queues one item; resolves with its result once the batch holding it is committed. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        // Let the I/O callbacks that are already due submit their items into the same batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        batch.forEach((p) => p.reject(error));
      }
    }
    this.running = false;
  }
}

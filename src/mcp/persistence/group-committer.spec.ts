import { GroupCommitter } from './group-committer';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A flush whose batches the test commits or fails one by one. */
class ControlledFlush {
  readonly batches: string[][] = [];
  private readonly pending: Deferred<string[]>[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private static readonly waitMs = 2_000;

  readonly flush = (items: string[]): Promise<string[]> => {
    this.batches.push([...items]);
    const d = deferred<string[]>();
    this.pending.push(d);
    this.waiters = this.waiters.filter((w) => (this.batches.length >= w.count ? (w.resolve(), false) : true));
    return d.promise;
  };

  /**
   * Resolves once `count` batches have been handed to the flush; rejects if they have not been
   * within two seconds (the committer's own delays are at most 500 ms), so a committer that never
   * flushes fails the test instead of holding it.
   */
  called(count: number): Promise<void> {
    if (this.batches.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.batches.length} batches flushed, waited 2 s for ${count}`)),
        ControlledFlush.waitMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  commit(index: number): void {
    this.pending[index].resolve(this.batches[index].map((item) => `saved:${item}`));
  }

  fail(index: number, error: Error): void {
    this.pending[index].reject(error);
  }
}

describe('GroupCommitter', () => {
  it('commits items submitted together as one batch, each caller getting its own result', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush);
    const results = ['a', 'b', 'c'].map((item) => committer.submit(item));
    await flush.called(1);
    flush.commit(0);
    await expect(Promise.all(results)).resolves.toEqual(['saved:a', 'saved:b', 'saved:c']);
    expect(flush.batches).toEqual([['a', 'b', 'c']]);
  });

  it('gathers the items that arrive during a flush into the next batch (one lane)', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush, 500, 1);
    const first = committer.submit('a');
    await flush.called(1);
    const later = [committer.submit('b'), committer.submit('c'), committer.submit('d')];
    flush.commit(0);
    await expect(first).resolves.toBe('saved:a');
    await flush.called(2);
    expect(flush.batches).toEqual([['a'], ['b', 'c', 'd']]);
    flush.commit(1);
    await expect(Promise.all(later)).resolves.toEqual(['saved:b', 'saved:c', 'saved:d']);
  });

  it('with the default lanes, gathers the items that arrive while every lane is busy into one batch', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush);
    const a = committer.submit('a');
    await flush.called(1);
    const b = committer.submit('b');
    await flush.called(2); // a second lane writes while the first is in flight
    const later = [committer.submit('c'), committer.submit('d'), committer.submit('e')];
    flush.commit(1);
    await expect(b).resolves.toBe('saved:b');
    await flush.called(3);
    expect(flush.batches).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    flush.commit(2);
    await expect(Promise.all(later)).resolves.toEqual(['saved:c', 'saved:d', 'saved:e']);
    flush.commit(0);
    await expect(a).resolves.toBe('saved:a');
    expect(flush.batches).toHaveLength(3);
  });

  it.each([1, 2])(
    'never has more than maxLanes (%i) batches in flight: the next one starts when a lane frees',
    async (maxLanes) => {
      const flush = new ControlledFlush();
      const committer = new GroupCommitter(flush.flush, 500, maxLanes);
      const busy: Promise<string>[] = [];
      for (let lane = 0; lane < maxLanes; lane++) {
        busy.push(committer.submit(`busy-${lane}`));
        await flush.called(lane + 1);
      }
      const waiting = committer.submit('waiting');
      // Several turns later, no further batch has been handed to the flush: every lane is busy.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(flush.batches).toHaveLength(maxLanes);
      flush.commit(0);
      await flush.called(maxLanes + 1);
      expect(flush.batches[maxLanes]).toEqual(['waiting']);
      flush.commit(maxLanes);
      await expect(waiting).resolves.toBe('saved:waiting');
      for (let lane = 1; lane < maxLanes; lane++) flush.commit(lane);
      await expect(Promise.all(busy)).resolves.toEqual(busy.map((_, lane) => `saved:busy-${lane}`));
    },
  );

  it('splits a crowd into batches of at most maxBatch items', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush, 2);
    const results = ['a', 'b', 'c', 'd', 'e'].map((item) => committer.submit(item));
    await flush.called(1);
    flush.commit(0);
    await flush.called(2);
    flush.commit(1);
    await flush.called(3);
    flush.commit(2);
    await expect(Promise.all(results)).resolves.toEqual(['saved:a', 'saved:b', 'saved:c', 'saved:d', 'saved:e']);
    expect(flush.batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('rejects every item of a failed batch and keeps working afterwards', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush);
    const failed = [committer.submit('a'), committer.submit('b')];
    await flush.called(1);
    const outage = new Error('database is down');
    flush.fail(0, outage);
    const outcomes = await Promise.allSettled(failed);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: outage },
      { status: 'rejected', reason: outage },
    ]);

    const next = committer.submit('c');
    await flush.called(2);
    flush.commit(1);
    await expect(next).resolves.toBe('saved:c');
    expect(flush.batches).toEqual([['a', 'b'], ['c']]);
  });

  it('fails only the batch that failed when a later batch was already queued', async () => {
    const flush = new ControlledFlush();
    const committer = new GroupCommitter(flush.flush);
    const first = committer.submit('a');
    await flush.called(1);
    const second = committer.submit('b');
    flush.fail(0, new Error('deadlock'));
    await expect(first).rejects.toThrow('deadlock');
    await flush.called(2);
    flush.commit(1);
    await expect(second).resolves.toBe('saved:b');
  });

  it('rejects the items when the flush throws synchronously', async () => {
    const committer = new GroupCommitter<string, string>(() => {
      throw new Error('not connected');
    });
    await expect(committer.submit('a')).rejects.toThrow('not connected');
  });
});

describe('GroupCommitter with isolation', () => {
  class Refused extends Error {}
  class Unreachable extends Error {}
  const isolation = {
    isRefusal: (error: unknown) => error instanceof Refused,
    refused: (item: string, error: unknown) => new Error(`refused ${item}: ${(error as Error).message}`),
  };

  it('writes a failed batch again item by item: only the refused item rejects, the others resolve', async () => {
    const flushed: string[][] = [];
    const committer = new GroupCommitter<string, string>(
      async (items) => {
        flushed.push([...items]);
        if (items.includes('bad')) throw new Refused('value too long');
        return items.map((item) => `saved:${item}`);
      },
      500,
      2,
      isolation,
    );
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((item) => committer.submit(item)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 'saved:a' },
      { status: 'rejected', reason: new Error('refused bad: value too long') },
      { status: 'fulfilled', value: 'saved:c' },
    ]);
    expect(flushed).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('fails a batch at once, with the raw error, when the failure is not a refusal', async () => {
    const flushed: string[][] = [];
    const outage = new Unreachable('connect ECONNREFUSED');
    const committer = new GroupCommitter<string, string>(
      async (items) => {
        flushed.push([...items]);
        throw outage;
      },
      500,
      2,
      isolation,
    );
    const results = await Promise.allSettled(['a', 'b'].map((item) => committer.submit(item)));
    expect(results.map((r) => (r as PromiseRejectedResult).reason)).toEqual([outage, outage]);
    expect(flushed).toEqual([['a', 'b']]);
  });

  it('maps the refusal of a lone item without writing it twice', async () => {
    let calls = 0;
    const committer = new GroupCommitter<string, string>(
      async () => {
        calls++;
        throw new Refused('check constraint');
      },
      500,
      2,
      isolation,
    );
    await expect(committer.submit('only')).rejects.toThrow('refused only: check constraint');
    expect(calls).toBe(1);
  });
});

describe('GroupCommitter backlog and idle (the flush at shutdown)', () => {
  it('counts queued and in-flight items, and idle() resolves once the last batch settled', async () => {
    const control = new ControlledFlush();
    const committer = new GroupCommitter(control.flush, 500, 1);
    await committer.idle();
    expect(committer.backlog).toBe(0);
    const first = committer.submit('a');
    await control.called(1);
    const second = committer.submit('b');
    const third = committer.submit('c');
    expect(committer.backlog).toBe(3);
    let idle = false;
    const idlePromise = committer.idle().then(() => (idle = true));
    control.commit(0);
    await first;
    await control.called(2);
    expect(committer.backlog).toBe(2);
    expect(idle).toBe(false);
    control.commit(1);
    await Promise.all([second, third, idlePromise]);
    expect(idle).toBe(true);
    expect(committer.backlog).toBe(0);
  });
});

describe('GroupCommitter deadline (one timer for every waiting caller)', () => {
  const timedOut = () => new Error('the database did not answer in time');

  it('rejects a caller whose batch is still in flight at its deadline; the batch result later changes nothing', async () => {
    const control = new ControlledFlush();
    const committer = new GroupCommitter(control.flush, 500, 1, undefined, { ms: 50, error: timedOut });
    const started = performance.now();
    const stuck = committer.submit('a');
    await control.called(1);
    await expect(stuck).rejects.toThrow('the database did not answer in time');
    expect(performance.now() - started).toBeGreaterThanOrEqual(49);
    // The row is still being written: the shutdown flush waits for it.
    expect(committer.backlog).toBe(1);
    let idle = false;
    const idlePromise = committer.idle().then(() => (idle = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    control.commit(0);
    await idlePromise;
    expect(committer.backlog).toBe(0);
  });

  it('rejects queued callers behind a stuck lane at their own deadlines, drops them from the queue, and serves later callers', async () => {
    const control = new ControlledFlush();
    const committer = new GroupCommitter(control.flush, 500, 1, undefined, { ms: 60, error: timedOut });
    const first = committer.submit('first');
    await control.called(1);
    const queued = committer.submit('queued');
    await expect(first).rejects.toThrow('did not answer in time');
    await expect(queued).rejects.toThrow('did not answer in time');
    // The expired queued item never reaches the database: the lane's next batch holds only what came after it.
    const later = committer.submit('later');
    control.commit(0);
    await control.called(2);
    expect(control.batches).toEqual([['first'], ['later']]);
    control.commit(1);
    await expect(later).resolves.toBe('saved:later');
    expect(committer.backlog).toBe(0);
  });

  it('keeps the callers of a batch that answers in time, and expires each caller from its own submit', async () => {
    const control = new ControlledFlush();
    // Margins a busy machine's stalls fit in: `late` has 400 ms left when `early` runs out.
    const committer = new GroupCommitter(control.flush, 500, 1, undefined, { ms: 1000, error: timedOut });
    const early = committer.submit('early');
    await control.called(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const late = committer.submit('late');
    // `early` runs out at 1000 ms; `late`, submitted 600 ms after it, still has time when the first batch commits.
    await expect(early).rejects.toThrow('did not answer in time');
    control.commit(0);
    await control.called(2);
    control.commit(1);
    await expect(late).resolves.toBe('saved:late');
  });
});

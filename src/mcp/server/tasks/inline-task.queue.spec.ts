import { McpInlineTaskQueue } from './inline-task.queue';

/** A task handler that waits until the test lets it finish. */
function gatedWork() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const work = (taskId: string) =>
    new Promise<void>((resolve) => {
      started.push(taskId);
      gates.set(taskId, resolve);
    });
  const finish = async (taskId: string) => {
    gates.get(taskId)?.();
    // Let the queue's `finally` run and hand the next task on.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { work, started, finish };
}

describe('McpInlineTaskQueue.stats', () => {
  afterEach(() => jest.restoreAllMocks());

  it('has no worker before it starts, and counts what waits meanwhile', async () => {
    const queue = new McpInlineTaskQueue();
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000);
    await queue.enqueue('t1');
    now.mockReturnValue(1_750);
    expect(await queue.stats()).toEqual({ mode: 'inline', workers: 0, active: 0, waiting: 1, oldestWaitingMs: 750 });
    await queue.close();
  });

  it('one in-process worker: active tasks up to the concurrency, the rest waiting, the oldest first', async () => {
    const queue = new McpInlineTaskQueue();
    const { work, started, finish } = gatedWork();
    await queue.start(work, 1);
    expect(await queue.stats()).toEqual({ mode: 'inline', workers: 1, active: 0, waiting: 0, oldestWaitingMs: null });

    const now = jest.spyOn(Date, 'now').mockReturnValue(10_000);
    await queue.enqueue('t1');
    await queue.enqueue('t2');
    now.mockReturnValue(10_400);
    await queue.enqueue('t3');
    now.mockReturnValue(11_000);
    expect(started).toEqual(['t1']);
    expect(await queue.stats()).toEqual({ mode: 'inline', workers: 1, active: 1, waiting: 2, oldestWaitingMs: 1_000 });

    await finish('t1');
    expect(started).toEqual(['t1', 't2']);
    expect(await queue.stats()).toMatchObject({ active: 1, waiting: 1, oldestWaitingMs: 600 });

    await finish('t2');
    await finish('t3');
    expect(await queue.stats()).toEqual({ mode: 'inline', workers: 1, active: 0, waiting: 0, oldestWaitingMs: null });
    await queue.close();
  });

  it('a process that runs no task (concurrency 0) has no worker: its tasks only wait', async () => {
    const queue = new McpInlineTaskQueue();
    const { work, started } = gatedWork();
    await queue.start(work, 0);
    await queue.enqueue('t1');
    expect(started).toEqual([]);
    expect(await queue.stats()).toMatchObject({ workers: 0, active: 0, waiting: 1 });
    await queue.close();
  });

  it('once closed: no worker and nothing waiting', async () => {
    const queue = new McpInlineTaskQueue();
    const { work, finish } = gatedWork();
    await queue.start(work, 1);
    await queue.enqueue('t1');
    await queue.enqueue('t2');
    const closed = queue.close();
    await finish('t1');
    await closed;
    expect(await queue.stats()).toEqual({ mode: 'inline', workers: 0, active: 0, waiting: 0, oldestWaitingMs: null });
  });
});

import { McpCallNotFoundError } from '../../errors/mcp-client-call.errors';
import { McpServerError, McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { InlineCallQueue } from './inline-call-queue';

const options: McpResolvedQueueOptions = {
  bull: null,
  name: 'mcp',
  concurrency: 2,
  worker: true,
  attempts: 3,
  backoffMs: 1,
  keepResultsMs: 60_000,
  commandTimeoutMs: 1000,
  waitTimeoutMs: 1000,
};

const toolCall: McpCallJob = {
  server: 'srv',
  method: 'tools/call',
  params: { name: 't' },
  scopeKey: 'k',
  timeoutMs: 1000,
};
const listTools: McpCallJob = { ...toolCall, method: 'tools/list', params: {} };

type Process = (job: McpCallJob, attempt: McpCallAttempt) => Promise<Record<string, unknown>>;

function queueWith(process: Process, overrides: Partial<McpResolvedQueueOptions> = {}) {
  const spy = jest.fn(process);
  const queue = new InlineCallQueue({ ...options, ...overrides }, { process: spy } as unknown as McpCallProcessor);
  return { queue, process: spy };
}

function failing(...errors: Error[]): Process {
  let n = 0;
  return async () => {
    const error = errors[Math.min(n++, errors.length - 1)];
    if (error) throw error;
    return { ok: true };
  };
}

describe('InlineCallQueue at most once', () => {
  it('never runs a tools/call again after a failure that may have reached the server', async () => {
    const delivered = new McpTransportError('connection reset', true);
    const { queue, process } = queueWith(failing(delivered));
    await expect(queue.execute(toolCall)).rejects.toBe(delivered);
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('never runs a tools/call again after a timeout that may have reached the server', async () => {
    const timeout = new McpTimeoutError('late', true, 1000);
    const { queue, process } = queueWith(failing(timeout));
    await expect(queue.execute(toolCall)).rejects.toBe(timeout);
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('runs a tools/call again when the failure proves the message never left', async () => {
    const { queue, process } = queueWith(
      failing(new McpTransportError('ECONNREFUSED', false), undefined as unknown as Error),
    );
    await expect(queue.execute(toolCall)).resolves.toEqual({ ok: true });
    expect(process).toHaveBeenCalledTimes(2);
  });

  it('retries an idempotent method after a delivered failure, up to `attempts` runs in all', async () => {
    const error = new McpTransportError('reset', true);
    const { queue, process } = queueWith(failing(error));
    await expect(queue.execute(listTools)).rejects.toBe(error);
    expect(process).toHaveBeenCalledTimes(3);
  });

  it('makes exactly one run when attempts is 1', async () => {
    const { queue, process } = queueWith(failing(new McpTransportError('refused', false)), { attempts: 1 });
    await expect(queue.execute(listTools)).rejects.toThrow('refused');
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('does not retry a JSON-RPC error from the server', async () => {
    const { queue, process } = queueWith(failing(new McpServerError({ code: -32602, message: 'bad params' })));
    await expect(queue.execute(listTools)).rejects.toBeInstanceOf(McpServerError);
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('makes no retry that could only start after the caller deadline', async () => {
    const { queue, process } = queueWith(failing(new McpTransportError('refused', false)), { backoffMs: 60_000 });
    await expect(queue.execute({ ...listTools, deadlineAt: Date.now() + 30_000 })).rejects.toThrow('refused');
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('makes no retry once the queue is closing, even in the middle of a backoff', async () => {
    const { queue, process } = queueWith(failing(new McpTransportError('refused', false)), { backoffMs: 60_000 });
    const run = queue.execute(listTools);
    await new Promise((resolve) => setImmediate(resolve));
    expect(process).toHaveBeenCalledTimes(1);
    await queue.close();
    await expect(run).rejects.toThrow('refused');
    expect(process).toHaveBeenCalledTimes(1);
    await expect(queue.execute(listTools)).rejects.toThrow('refused');
    expect(process).toHaveBeenCalledTimes(2);
  });

  it('gives the processor an attempt whose claim always succeeds and whose id is the call id', async () => {
    const seen: McpCallAttempt[] = [];
    const { queue } = queueWith(async (_job, attempt) => {
      seen.push(attempt);
      return {};
    });
    const id = await queue.submit(toolCall);
    await queue.wait(id);
    expect(seen[0].id).toBe(id);
    await expect(seen[0].claim()).resolves.toBe(true);
    await expect(seen[0].release()).resolves.toBeUndefined();
  });
});

describe('InlineCallQueue outcomes', () => {
  it('keeps a completed outcome readable by id, as a copy', async () => {
    const { queue } = queueWith(async () => ({ content: [] }));
    const id = await queue.submit(toolCall);
    await expect(queue.wait(id)).resolves.toEqual({ content: [] });
    const state = await queue.state(id);
    expect(state).toEqual({ id, state: 'completed', result: { content: [] } });
    state.state = 'pending';
    expect((await queue.state(id)).state).toBe('completed');
    expect(queue.mode).toBe('inline');
  });

  it('reports pending while running, and the typed error once failed', async () => {
    let fail!: (error: Error) => void;
    const { queue } = queueWith(() => new Promise((_, reject) => (fail = reject)));
    const id = await queue.submit(toolCall);
    expect(await queue.state(id)).toEqual({ id, state: 'pending' });
    await new Promise((resolve) => setImmediate(resolve));
    const error = new McpTransportError('reset', true);
    fail(error);
    await expect(queue.wait(id)).rejects.toBe(error);
    expect(await queue.state(id)).toEqual({ id, state: 'failed', error });
  });

  it('forgets an outcome keepResultsMs after the call finished, never while it runs', async () => {
    jest.useFakeTimers({ now: 1_800_000_000_000 });
    try {
      let finish!: () => void;
      const { queue } = queueWith(() => new Promise((resolve) => (finish = () => resolve({ done: true }))), {
        keepResultsMs: 1000,
      });
      const id = await queue.submit(toolCall);
      await jest.advanceTimersByTimeAsync(5000);
      expect((await queue.state(id)).state).toBe('pending');
      finish();
      await expect(queue.wait(id)).resolves.toEqual({ done: true });
      jest.setSystemTime(Date.now() + 999);
      expect((await queue.state(id)).state).toBe('completed');
      jest.setSystemTime(Date.now() + 1);
      await expect(queue.state(id)).rejects.toBeInstanceOf(McpCallNotFoundError);
      await expect(queue.wait(id)).rejects.toBeInstanceOf(McpCallNotFoundError);
    } finally {
      jest.useRealTimers();
    }
  });

  it('prunes expired outcomes when a new call is submitted', async () => {
    jest.useFakeTimers({ now: 1_800_000_000_000 });
    try {
      const { queue } = queueWith(async () => ({}), { keepResultsMs: 10 });
      const first = await queue.submit(toolCall);
      await queue.wait(first);
      jest.setSystemTime(Date.now() + 10);
      await queue.submit(toolCall);
      const calls = (queue as unknown as { calls: Map<string, unknown> }).calls;
      expect(calls.has(first)).toBe(false);
      expect(calls.size).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('rejects an unknown id with McpCallNotFoundError', async () => {
    const { queue } = queueWith(async () => ({}));
    await expect(queue.state('nope')).rejects.toBeInstanceOf(McpCallNotFoundError);
    await expect(queue.wait('nope')).rejects.toBeInstanceOf(McpCallNotFoundError);
  });

  it('hands the notifications a call sees to every listener', async () => {
    const { queue } = queueWith(async (_job, attempt) => {
      attempt.notify('srv', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      return {};
    });
    const heard: unknown[] = [];
    queue.onNotification((server, notification) => heard.push([server, notification.method]));
    await queue.execute(toolCall);
    expect(heard).toEqual([['srv', 'notifications/tools/list_changed']]);
  });
});

describe('InlineCallQueue concurrency', () => {
  it('runs at most `concurrency` attempts at once and starts the next as one ends', async () => {
    const running: Array<() => void> = [];
    let peak = 0;
    let now = 0;
    const { queue, process } = queueWith(
      () =>
        new Promise((resolve) => {
          now++;
          peak = Math.max(peak, now);
          running.push(() => {
            now--;
            resolve({});
          });
        }),
      { concurrency: 2 },
    );
    const ids = await Promise.all([1, 2, 3, 4].map(() => queue.submit(toolCall)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(process).toHaveBeenCalledTimes(2);
    running.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(process).toHaveBeenCalledTimes(3);
    while (running.length) {
      running.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(ids.map((id) => queue.wait(id)));
    expect(process).toHaveBeenCalledTimes(4);
    expect(peak).toBe(2);
    expect((queue as unknown as { running: number }).running).toBe(0);
  });

  it('frees the slot of an attempt that failed', async () => {
    const { queue, process } = queueWith(failing(new McpServerError({ code: -1, message: 'x' })), { concurrency: 1 });
    for (const run of [1, 2]) {
      const attempt = queue.execute(toolCall);
      await expect(attempt).rejects.toBeInstanceOf(McpServerError);
      await expect(attempt).rejects.toThrow(new Error('MCP server error -1: x'));
      expect(process).toHaveBeenCalledTimes(run);
    }
  });
});

describe('InlineCallQueue close', () => {
  it('waits for the calls still running before it resolves', async () => {
    let release!: () => void;
    const { queue } = queueWith(() => new Promise((resolve) => (release = () => resolve({ late: true }))));
    const id = await queue.submit(toolCall);
    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(closed).toBe(true);
    await expect(queue.state(id)).resolves.toEqual({ id, state: 'completed', result: { late: true } });
  });
});

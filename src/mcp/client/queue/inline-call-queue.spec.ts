import { McpTransportError } from '../../errors/mcp-client.errors';
import { McpCallAbortedError } from '../mcp-call-aborted.errors';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallEvent, McpCallJob } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { InlineCallQueue } from './inline-call-queue';

const options: McpResolvedQueueOptions = {
  bull: null,
  name: 'mcp',
  concurrency: 1,
  worker: true,
  attempts: 3,
  backoffMs: 1,
  keepResultsMs: 60_000,
  commandTimeoutMs: 1000,
  waitTimeoutMs: 1000,
};

const listTools: McpCallJob = { server: 'srv', method: 'tools/list', params: {}, scopeKey: 'k', timeoutMs: 5000 };

type Process = (job: McpCallJob, attempt: McpCallAttempt) => Promise<Record<string, unknown>>;

function queueWith(process: Process, overrides: Partial<McpResolvedQueueOptions> = {}) {
  const spy = jest.fn(process);
  const queue = new InlineCallQueue({ ...options, ...overrides }, { process: spy } as unknown as McpCallProcessor);
  return { queue, process: spy };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('InlineCallQueue watch and stats', () => {
  let queue: InlineCallQueue | undefined;
  afterEach(async () => {
    await queue?.close();
    queue = undefined;
  });

  it('reports one worker, the running and waiting attempts and the age of the oldest waiting one, and no worker once closed', async () => {
    const releases: Array<() => void> = [];
    ({ queue } = queueWith(() => new Promise((resolve) => releases.push(() => resolve({})))));
    queue.start();
    queue.start();
    await expect(queue.stats()).resolves.toEqual({
      mode: 'inline',
      workers: 1,
      active: 0,
      waiting: 0,
      oldestWaitingMs: null,
    });
    const first = queue.execute(listTools);
    const second = queue.execute(listTools);
    await tick();
    const busy = await queue.stats();
    expect(busy).toMatchObject({ workers: 1, active: 1, waiting: 1 });
    expect(busy.oldestWaitingMs).toEqual(expect.any(Number));
    expect(busy.oldestWaitingMs).toBeGreaterThanOrEqual(0);
    releases.shift()!();
    await tick();
    releases.shift()!();
    await Promise.all([first, second]);
    await queue.close();
    await expect(queue.stats()).resolves.toMatchObject({ workers: 0, active: 0, waiting: 0, oldestWaitingMs: null });
  });

  it('hands the events the processor reports to the caller of execute', async () => {
    const event = { type: 'progress', progress: 1 } as unknown as McpCallEvent;
    ({ queue } = queueWith(async (_job, attempt) => {
      attempt.report(event);
      return { ok: true };
    }));
    const seen: McpCallEvent[] = [];
    await expect(queue.execute(listTools, { onEvent: (e) => seen.push(e) })).resolves.toEqual({ ok: true });
    expect(seen).toEqual([event]);
    // Without a watcher, a reported event goes nowhere and the call still succeeds.
    await expect(queue.execute(listTools)).resolves.toEqual({ ok: true });
  });

  it('gives the processor the caller signal, and refuses at once a call whose signal already fired', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const { queue: q, process } = queueWith(async (_job, attempt) => {
      seen = attempt.signal;
      return {};
    });
    queue = q;
    await q.execute(listTools, { signal: controller.signal });
    expect(seen).toBe(controller.signal);
    controller.abort(new Error('user gave up'));
    const refused = q.execute(listTools, { signal: controller.signal });
    await expect(refused).rejects.toBeInstanceOf(McpCallAbortedError);
    await expect(refused).rejects.toMatchObject({ delivered: false });
    expect(process).toHaveBeenCalledTimes(1);
  });

  it('takes a call aborted while it waits for a slot out of the line, never sends it, and lets the next one run', async () => {
    let release!: () => void;
    const { queue: q, process } = queueWith(async () => {
      if (process.mock.calls.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return { n: process.mock.calls.length };
    });
    queue = q;
    const running = q.execute(listTools);
    const controller = new AbortController();
    const aborted = q.execute(listTools, { signal: controller.signal });
    const third = q.execute(listTools);
    await tick();
    await expect(q.stats()).resolves.toMatchObject({ active: 1, waiting: 2 });
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(McpCallAbortedError);
    await expect(q.stats()).resolves.toMatchObject({ waiting: 1 });
    release();
    await expect(running).resolves.toEqual({ n: 1 });
    await expect(third).resolves.toEqual({ n: 2 });
    expect(process).toHaveBeenCalledTimes(2);
  });

  it('does not retry a retryable failure once the caller aborted', async () => {
    const controller = new AbortController();
    const undelivered = new McpTransportError('connect refused', false);
    const { queue: q, process } = queueWith(async () => {
      controller.abort();
      throw undelivered;
    });
    queue = q;
    await expect(q.execute(listTools, { signal: controller.signal })).rejects.toBe(undelivered);
    expect(process).toHaveBeenCalledTimes(1);
  });
});

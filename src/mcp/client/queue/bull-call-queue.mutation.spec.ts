import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import Redis from 'ioredis';
import { TEST_REDIS_URL } from '../../../../test/support/redis';
import { McpCallNotFoundError } from '../../errors/mcp-client-call.errors';
import { McpTransportError } from '../../errors/mcp-client.errors';
import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { BullCallQueue } from './bull-call-queue';

/**
 * The at-most-once mark is Redis's own `SET NX`: the marks of these specs are written to the real
 * Redis of the test run (TEST_REDIS_URL), under queue names no other run uses, so the refusal of a
 * second claim, the TTL and the release are Redis's behaviour, not a copy of it.
 */
const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
const runToken = `mcp-mark-spec-${process.pid}-${Date.now()}`;
/** The value of a mark this process writes: its pid and a UUID of the write. */
const MARK_VALUE = new RegExp(`^${process.pid}:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);
let queues = 0;

afterAll(async () => {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `*${runToken}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

/** The part of a Bull queue the call queue uses: its Redis commands go to the real Redis, the rest is in memory. */
class FakeBullQueue extends EventEmitter {
  static last: FakeBullQueue;
  readonly client: EventEmitter & {
    status: string;
    set: jest.Mock;
    get: jest.Mock;
    del: jest.Mock;
    duplicate: jest.Mock;
  } = Object.assign(new EventEmitter(), {
    status: 'ready',
    set: jest.fn((...args: unknown[]) => (redis.set as (...a: unknown[]) => Promise<unknown>)(...args)),
    get: jest.fn((key: string) => redis.get(key)),
    del: jest.fn((key: string) => redis.del(key)),
    // The connection of the marks' SET and WAIT: a real one to the same Redis.
    duplicate: jest.fn((): unknown => new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 })),
  });
  /**
   * Bull's subscriber connection, which carries the global events. Its PING is answered at once
   * unless a test holds it (Redis answers it after the SUBSCRIBE commands sent before it).
   */
  readonly eclient = Object.assign(new EventEmitter(), { ping: jest.fn(async (): Promise<unknown> => 'PONG') });
  handler?: (job: unknown) => Promise<Record<string, unknown>>;
  added: Array<{ data: unknown; opts: unknown }> = [];
  jobs = new Map<string, Record<string, unknown>>();

  constructor(
    readonly name: string,
    readonly opts: unknown,
  ) {
    super();
    FakeBullQueue.last = this;
  }

  process(_concurrency: number, handler: (job: unknown) => Promise<Record<string, unknown>>): Promise<void> {
    this.handler = handler;
    return new Promise(() => undefined);
  }

  async add(data: unknown, opts: unknown) {
    this.added.push({ data, opts });
    return { id: 42 };
  }

  async getJob(id: string) {
    return this.jobs.get(id) ?? null;
  }

  closing: () => Promise<void> = async () => undefined;
  clients: Array<{ disconnect: jest.Mock }> = [{ disconnect: jest.fn() }, { disconnect: jest.fn() }];

  async close() {
    return this.closing();
  }

  /** Bull confirms the subscription of a global event; here on the next turn. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the signature EventEmitter's `on` declares
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'global:completed' || event === 'global:failed') setImmediate(() => this.emit(`registered:${event}`));
    return this;
  }
}

jest.mock('bull', () => FakeBullQueue);

const options: McpResolvedQueueOptions = {
  bull: { prefix: 'pfx' },
  name: 'calls',
  concurrency: 1,
  worker: true,
  attempts: 3,
  backoffMs: 100,
  keepResultsMs: 90_500,
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

function fakeJob(data: McpCallJob & Record<string, unknown>, attemptsMade = 0, attempts = 3) {
  return {
    id: 7,
    data,
    attemptsMade,
    opts: { attempts },
    update: jest.fn(async () => undefined),
    discard: jest.fn(),
    progress: jest.fn(async () => undefined),
  };
}

/** A worker on a queue of its own name, so that no two tests share a mark in Redis. */
function worker(
  process: (job: McpCallJob, attempt: McpCallAttempt) => Promise<Record<string, unknown>>,
  overrides: Partial<McpResolvedQueueOptions> = {},
) {
  const spy = jest.fn(process);
  const name = `${runToken}-calls-${++queues}`;
  const queue = new BullCallQueue({ ...options, name, ...overrides }, { process: spy } as unknown as McpCallProcessor);
  queue.start();
  const bull = FakeBullQueue.last;
  return { queue, bull, name, process: spy, run: (job: ReturnType<typeof fakeJob>) => bull.handler!(job) };
}

/**
 * Waits for `condition`, for at most two seconds: a change that never registers the waiter fails
 * the test at once instead of spinning until the runner gives up.
 */
async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited 2 s for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('BullCallQueue worker: the at-most-once mark', () => {
  it('marks the job in Redis with SET NX under the queue prefix, for as long as results are kept', async () => {
    const { bull, name, run } = worker(async (_job, attempt) => {
      expect(await attempt.claim()).toBe(true);
      return { ok: true };
    });
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ ok: true });
    const key = `pfx:${name}:mcp-attempted:7`;
    expect(bull.client.set).toHaveBeenCalledTimes(1);
    expect(bull.client.set).toHaveBeenCalledWith(key, expect.stringMatching(MARK_VALUE), 'EX', 91, 'NX');
    await expect(redis.get(key)).resolves.toBe(bull.client.set.mock.calls[0][1]);
    // keepResultsMs is 90,500 ms: the mark lives 91 s, rounded up to whole seconds.
    await expect(redis.ttl(key)).resolves.toBe(91);
  });

  it('uses the default bull prefix when none is configured', async () => {
    const { bull, name, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }), { bull: {} });
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    expect(bull.client.set.mock.calls[0][0]).toBe(`bull:${name}:mcp-attempted:7`);
    await expect(redis.get(`bull:${name}:mcp-attempted:7`)).resolves.toMatch(MARK_VALUE);
  });

  it('claims the mark its own SET wrote when ioredis sent that SET again after the reply was lost', async () => {
    const { bull, name, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    // The first SET ran on Redis; the one that answers is its copy, sent again on a new connection.
    bull.client.set.mockImplementationOnce(async (...args: [string, string, 'EX', number, 'NX']) => {
      await redis.set(...args);
      return redis.set(...args);
    });
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    await expect(redis.get(`pfx:${name}:mcp-attempted:7`)).resolves.toBe(bull.client.set.mock.calls[0][1]);
  });

  it('refuses the claim of a job already marked by an earlier attempt', async () => {
    const claims: boolean[] = [];
    const { run } = worker(async (_job, attempt) => {
      claims.push(await attempt.claim());
      return {};
    });
    await run(fakeJob({ ...toolCall }));
    await run(fakeJob({ ...toolCall }, 1));
    expect(claims).toEqual([true, false]);
  });

  it('lets one of two workers racing for the same job claim it, never both', async () => {
    const claims: boolean[] = [];
    const { name, run } = worker(async (_job, attempt) => {
      claims.push(await attempt.claim());
      return {};
    });
    const other = worker(
      async (_job, attempt) => {
        claims.push(await attempt.claim());
        return {};
      },
      { name },
    );
    await Promise.all([run(fakeJob({ ...toolCall })), other.run(fakeJob({ ...toolCall }))]);
    expect(claims.sort()).toEqual([false, true]);
  });

  it('refuses the claim when the mark cannot be written (Redis down)', async () => {
    const { bull, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    bull.client.status = 'reconnecting';
    await expect(attempt(run)).resolves.toBeInstanceOf(McpQueueUnavailableError);
    expect(bull.client.set).not.toHaveBeenCalled();

    async function attempt(runJob: typeof run): Promise<unknown> {
      return runJob(fakeJob({ ...toolCall })).catch((error: unknown) => error);
    }
  });

  it('releases the mark so a run that never left may be claimed again', async () => {
    const claims: boolean[] = [];
    let afterRelease: string | null = 'not read';
    const { bull, name, run } = worker(async (_job, attempt) => {
      claims.push(await attempt.claim());
      await attempt.release();
      afterRelease = await redis.get(`pfx:${name}:mcp-attempted:7`);
      claims.push(await attempt.claim());
      return {};
    });
    await run(fakeJob({ ...toolCall }));
    expect(claims).toEqual([true, true]);
    expect(afterRelease).toBeNull();
    expect(bull.client.del).toHaveBeenCalledTimes(1);
    expect(bull.client.del).toHaveBeenCalledWith(`pfx:${name}:mcp-attempted:7`);
  });

  it('gives the processor the call without the failure of the previous attempt, and an attempt named by the job id', async () => {
    const { process, run } = worker(async () => ({}));
    await run(fakeJob({ ...toolCall, failure: { name: 'X', message: 'x', delivered: false, fields: {} } }));
    expect(process.mock.calls[0][0]).toEqual(toolCall);
    expect(process.mock.calls[0][1].id).toBe('7');
  });

  it('publishes the notifications of a call as job progress', async () => {
    const job = fakeJob({ ...toolCall });
    const notification = { jsonrpc: '2.0' as const, method: 'notifications/tools/list_changed' };
    const { run } = worker(async (_job, attempt) => {
      attempt.notify('srv', notification);
      return {};
    });
    await run(job);
    expect(job.progress).toHaveBeenCalledWith({ server: 'srv', notification });
  });
});

describe('BullCallQueue worker: marks that replicas must acknowledge (markReplicas)', () => {
  /** One more replica than the test Redis has: its WAIT can only fall short. */
  const moreThanThere = async () => Number(/connected_slaves:(\d+)/.exec(await redis.info('replication'))?.[1]) + 1;

  it('on a single node with no markReplicas, writes the mark with SET NX alone: no WAIT, no second connection', async () => {
    const { queue, bull, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    expect(queue.markReplicas).toBe(0);
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    expect(bull.client.set).toHaveBeenCalledTimes(1);
    expect(bull.client.duplicate).not.toHaveBeenCalled();
  });

  it('refuses the call when fewer replicas acknowledge within commandTimeoutMs, and deletes the mark', async () => {
    const needed = await moreThanThere();
    const errors: unknown[] = [];
    const { queue, bull, name, run } = worker(
      async (_job, attempt) => {
        errors.push(await attempt.claim().catch((e: unknown) => e));
        return {};
      },
      // Long enough that the SET is answered within the bound on a busy machine: WAIT runs it out.
      { markReplicas: needed, commandTimeoutMs: 1000 },
    );
    try {
      expect(queue.markReplicas).toBe(needed);
      await run(fakeJob({ ...toolCall }));
      expect(errors[0]).toBeInstanceOf(McpQueueUnavailableError);
      expect(errors[0]).toMatchObject({ operation: 'at-most-once mark', delivered: false });
      expect((errors[0] as Error).message).toBe(
        `The call queue's Redis is unavailable (at-most-once mark): only ${needed - 1} of the ${needed} replica(s) ` +
          'queue.markReplicas asks for acknowledged the mark within 1000 ms; the call was not sent. Check that the ' +
          "replicas of the queue's Redis are up and in sync (INFO replication on its master), or lower queue.markReplicas",
      );
      await expect(redis.exists(`pfx:${name}:mcp-attempted:7`)).resolves.toBe(0);
      // SET and WAIT went on the connection of the marks, not on the queue's.
      expect(bull.client.duplicate).toHaveBeenCalledTimes(1);
      expect(bull.client.set).not.toHaveBeenCalled();
    } finally {
      await queue.close();
    }
  });

  it('refuses the claim of a job an earlier attempt marked, and leaves that mark alone', async () => {
    const { queue, name, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }), {
      markReplicas: await moreThanThere(),
      // No timing here: a mark already there is refused without a WAIT.
      commandTimeoutMs: 2000,
    });
    try {
      await redis.set(`pfx:${name}:mcp-attempted:7`, 'an earlier worker');
      await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: false });
      await expect(redis.get(`pfx:${name}:mcp-attempted:7`)).resolves.toBe('an earlier worker');
    } finally {
      await queue.close();
    }
  });

  it('refuses the call when the SET and WAIT are not answered in time, and deletes the mark their late answer wrote', async () => {
    let answer!: (replies: unknown) => void;
    const marks = {
      status: 'ready',
      on: jest.fn(),
      disconnect: jest.fn(),
      del: jest.fn(async () => 1),
      pipeline: jest.fn(() => {
        const chain: { set: jest.Mock; wait: jest.Mock; exec: jest.Mock } = {
          set: jest.fn((): unknown => chain),
          wait: jest.fn((): unknown => chain),
          exec: jest.fn(() => new Promise((resolve) => (answer = resolve))),
        };
        return chain;
      }),
    };
    const errors: unknown[] = [];
    const { queue, bull, name, run } = worker(
      async (_job, attempt) => {
        errors.push(await attempt.claim().catch((e: unknown) => e));
        return {};
      },
      { markReplicas: 1, commandTimeoutMs: 20 },
    );
    expect(bull.client.duplicate).toHaveBeenCalledTimes(1);
    // The worker opened its connection at start: this test swaps in one that answers late.
    const opened = bull.client.duplicate.mock.results[0].value as Redis;
    opened.disconnect();
    (queue as unknown as { marks: { connection: unknown } }).marks.connection = marks;
    await run(fakeJob({ ...toolCall }));
    expect(errors[0]).toBeInstanceOf(McpQueueUnavailableError);
    expect(errors[0]).toMatchObject({
      operation: 'at-most-once mark',
      reason:
        'the mark and its WAIT for 1 replica(s) were not answered within 40 ms (the marks of one process wait ' +
        "one after the other); the call was not sent. Check that the replicas of the queue's Redis are up and " +
        'in sync (INFO replication on its master), or lower queue.markReplicas',
      delivered: false,
    });
    const chain = marks.pipeline.mock.results[0].value as { set: jest.Mock; wait: jest.Mock };
    expect(chain.set).toHaveBeenCalledWith(
      `pfx:${name}:mcp-attempted:7`,
      expect.stringMatching(MARK_VALUE),
      'EX',
      91,
      'NX',
    );
    expect(chain.wait).toHaveBeenCalledWith(1, 20);
    expect(marks.del).not.toHaveBeenCalled();
    answer([
      [null, 'OK'],
      [null, 0],
    ]);
    await until(() => marks.del.mock.calls.length > 0, 'the late mark to be deleted');
    expect(marks.del).toHaveBeenCalledWith(`pfx:${name}:mcp-attempted:7`);
    await queue.close();
    expect(marks.disconnect).toHaveBeenCalledTimes(1);
  });
});

describe('BullCallQueue worker: marks on a Cluster whose slot moved', () => {
  it('reloads the slot table and sends the mark once more when the SET comes back MOVED (the WAIT is never redirected)', async () => {
    const moved = Object.assign(new Error('MOVED 8356 127.0.0.1:30001'), { name: 'ReplyError' });
    const answers: unknown[] = [
      [
        [moved, null],
        [null, 1],
      ],
      [
        [null, 'OK'],
        [null, 1],
      ],
    ];
    const marks = {
      isCluster: true,
      status: 'ready',
      on: jest.fn(),
      disconnect: jest.fn(),
      del: jest.fn(async () => 1),
      refreshSlotsCache: jest.fn((done: () => void) => done()),
      pipeline: jest.fn(() => {
        const chain: { set: jest.Mock; wait: jest.Mock; exec: jest.Mock } = {
          set: jest.fn((): unknown => chain),
          wait: jest.fn((): unknown => chain),
          exec: jest.fn(async () => answers.shift()),
        };
        return chain;
      }),
    };
    const { queue, bull, run } = worker(async (_job, attempt) => ({ claimed: await attempt.claim() }), {
      markReplicas: 1,
    });
    (bull.client.duplicate.mock.results[0].value as Redis).disconnect();
    (queue as unknown as { marks: { connection: unknown } }).marks.connection = marks;
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    expect(marks.refreshSlotsCache).toHaveBeenCalledTimes(1);
    expect(marks.pipeline).toHaveBeenCalledTimes(2);
    expect(marks.del).not.toHaveBeenCalled();
    await queue.close();
  });
});

describe("BullCallQueue worker: marks with markReplicas unset on a replicated Redis ('auto')", () => {
  /** A worker whose queue is in auto mode (the default on Sentinel or a Cluster), on the real test Redis. */
  const autoWorker = (process: Parameters<typeof worker>[0], overrides: Partial<McpResolvedQueueOptions> = {}) => {
    const made = worker(process, overrides);
    (made.queue as unknown as { marks: { settings: { replicas: unknown } } }).marks.settings.replicas = 'auto';
    return made;
  };
  /**
   * A marks connection whose pipelines answer `answers`, one per pipeline (`MINE` stands for the
   * value the run's SET sent); each pipeline's commands are recorded. A GET outside a pipeline
   * answers `stored` (by default that value).
   */
  const fakeMarks = (answers: Replies[], stored: unknown = MINE) => {
    const chains: Array<Record<'set' | 'role' | 'get' | 'expire' | 'wait', jest.Mock>> = [];
    let written: unknown;
    const mine = (reply: unknown) => (reply === MINE ? written : reply);
    return {
      chains,
      status: 'ready',
      on: jest.fn(),
      disconnect: jest.fn(),
      del: jest.fn(async () => 1),
      get: jest.fn(async () => mine(stored)),
      pipeline: jest.fn(() => {
        const chain = {
          set: jest.fn((_key: string, value: unknown): unknown => ((written = value), chain)),
          role: jest.fn((): unknown => chain),
          get: jest.fn((): unknown => chain),
          expire: jest.fn((): unknown => chain),
          wait: jest.fn((): unknown => chain),
          exec: jest.fn(async () => answers.shift()?.map(([error, reply]) => [error, mine(reply)])),
        };
        chains.push(chain);
        return chain;
      }),
    };
  };
  type Replies = Array<[Error | null, unknown]>;
  /** In a fake's answer: the value of the mark the run's SET sent. */
  const MINE = Symbol('the value the run wrote');
  const oneReplica = ['master', 10, [['127.0.0.1', '6380', '10']]];
  const claiming = () => {
    const outcomes: unknown[] = [];
    return {
      outcomes,
      process: async (_job: McpCallJob, attempt: McpCallAttempt) => {
        outcomes.push(await attempt.claim().catch((error: unknown) => error));
        return {};
      },
    };
  };

  /** An auto worker whose marks connection answers `answers`, claiming one call: what the claim gave. */
  const claimWith = async (answers: Replies[], stored?: unknown) => {
    const marks = fakeMarks(answers, stored);
    const { outcomes, process } = claiming();
    const { queue, name, run } = autoWorker(process);
    Object.assign((queue as unknown as { marks: object }).marks, { connection: marks });
    await run(fakeJob({ ...toolCall }));
    return { outcomes, marks, queue, name };
  };

  it('with no replica listed by the master (ROLE), writes the mark and sends the call unacknowledged, warning once a minute', async () => {
    expect(await redis.role()).toEqual(['master', expect.any(Number), []]);
    const warnings: string[] = [];
    const warned = jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    const now = jest.spyOn(Date, 'now');
    const { queue, bull, name, run } = autoWorker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    try {
      await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
      await expect(redis.get(`pfx:${name}:mcp-attempted:7`)).resolves.toMatch(MARK_VALUE);
      expect(bull.client.set).not.toHaveBeenCalled();
      await expect(run({ ...fakeJob({ ...toolCall }), id: 8 })).resolves.toEqual({ claimed: true });
      expect(warnings).toEqual([
        `Queue "${name}": the master of the queue's Redis lists no connected replica, so the at-most-once marks ` +
          'of tools/call are not replicated: should it fail now, a call could be sent a second time. Calls are ' +
          'sent meanwhile (queue.markReplicas is unset); set queue.markReplicas to 1 to refuse them instead. ' +
          'Logged at most once a minute.',
      ]);
      const later = Date.now() + 60_000;
      now.mockReturnValue(later);
      await expect(run({ ...fakeJob({ ...toolCall }), id: 9 })).resolves.toEqual({ claimed: true });
      expect(warnings).toHaveLength(2);
    } finally {
      warned.mockRestore();
      now.mockRestore();
      await queue.close();
    }
  });

  it('with a replica listed, sends SET and ROLE, then GET and WAIT 1 on the same connection, and sends the call once it acknowledged', async () => {
    const marks = fakeMarks([
      [
        [null, 'OK'],
        [null, oneReplica],
      ],
      [
        [null, MINE],
        [null, 1],
      ],
    ]);
    const { queue, name, run } = autoWorker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    Object.assign((queue as unknown as { marks: object }).marks, { connection: marks });
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    const key = `pfx:${name}:mcp-attempted:7`;
    expect(marks.chains[0].set).toHaveBeenCalledWith(key, expect.stringMatching(MARK_VALUE), 'EX', 91, 'NX');
    expect(marks.chains[0].role).toHaveBeenCalledTimes(1);
    expect(marks.chains[0].wait).not.toHaveBeenCalled();
    expect(marks.chains[1].get).toHaveBeenCalledWith(key);
    expect(marks.chains[1].wait).toHaveBeenCalledWith(1, 1000);
    expect(marks.del).not.toHaveBeenCalled();
    await queue.close();
  });

  it('claims its own mark when the SET it sent again did not write, and has the replica acknowledge it anew (GET, EXPIRE, WAIT)', async () => {
    const marks = fakeMarks([
      [
        [null, null],
        [null, oneReplica],
      ],
      [
        [null, MINE],
        [null, 1],
        [null, 1],
      ],
    ]);
    const { queue, name, run } = autoWorker(async (_job, attempt) => ({ claimed: await attempt.claim() }));
    Object.assign((queue as unknown as { marks: object }).marks, { connection: marks });
    await expect(run(fakeJob({ ...toolCall }))).resolves.toEqual({ claimed: true });
    const key = `pfx:${name}:mcp-attempted:7`;
    expect(marks.get).toHaveBeenCalledWith(key);
    expect(marks.chains[1].get).toHaveBeenCalledWith(key);
    expect(marks.chains[1].expire).toHaveBeenCalledWith(key, 91);
    expect(marks.chains[1].wait).toHaveBeenCalledWith(1, 1000);
    expect(marks.del).not.toHaveBeenCalled();
    await queue.close();
  });

  it("refuses the claim when the SET did not write and the mark is another run's", async () => {
    const { outcomes, marks, queue } = await claimWith(
      [
        [
          [null, null],
          [null, oneReplica],
        ],
      ],
      `${process.pid}:an-earlier-run`,
    );
    expect(outcomes).toEqual([false]);
    expect(marks.pipeline).toHaveBeenCalledTimes(1);
    expect(marks.del).not.toHaveBeenCalled();
    await queue.close();
  });

  it('with a replica listed that does not acknowledge, refuses the call and deletes the mark', async () => {
    const { outcomes, marks, queue, name } = await claimWith([
      [
        [null, 'OK'],
        [null, oneReplica],
      ],
      [
        [null, MINE],
        [null, 0],
      ],
    ]);
    expect(outcomes[0]).toBeInstanceOf(McpQueueUnavailableError);
    expect(outcomes[0]).toMatchObject({
      operation: 'at-most-once mark',
      delivered: false,
      reason:
        'only 0 of the 1 replica(s) waited for (the master lists 1 connected) acknowledged the mark within 1000 ms; ' +
        "the call was not sent. Check that the replicas of the queue's Redis are up and in sync (INFO replication " +
        'on its master), or set queue.markReplicas to 0 to send calls without waiting',
    });
    expect(marks.del).toHaveBeenCalledWith(`pfx:${name}:mcp-attempted:7`);
    await queue.close();
  });

  it('refuses the call when the mark is not on the master its WAIT went to (a failover between), deleting nothing', async () => {
    const { outcomes, marks, queue } = await claimWith([
      [
        [null, 'OK'],
        [null, oneReplica],
      ],
      [
        [null, null],
        [null, 1],
      ],
    ]);
    expect(outcomes[0]).toMatchObject({
      operation: 'at-most-once mark',
      delivered: false,
      reason: 'the mark was not on the master its WAIT went to (a failover between them?); the call was not sent',
    });
    expect(marks.del).not.toHaveBeenCalled();
    await queue.close();
  });

  it('waits for one replica when ROLE fails, and says so when none acknowledges', async () => {
    const { outcomes, marks, queue } = await claimWith([
      [
        [null, 'OK'],
        [new Error("NOPERM this user has no permissions to run the 'role' command"), null],
      ],
      [
        [null, MINE],
        [null, 0],
      ],
    ]);
    expect(marks.chains[1].wait).toHaveBeenCalledWith(1, 1000);
    expect((outcomes[0] as Error).message).toContain(
      "only 0 of the 1 replica(s) waited for (ROLE did not say how many the master has: NOPERM this user has no permissions to run the 'role' command) acknowledged",
    );
    await queue.close();
  });
});

describe('BullCallQueue worker: which failures end the job', () => {
  it('ends a tools/call at once after a failure that may have reached the server, keeping the typed failure', async () => {
    const error = new McpTransportError('reset', true, 502);
    const job = fakeJob({ ...toolCall });
    const { run } = worker(async () => Promise.reject(error));
    await expect(run(job)).rejects.toBe(error);
    expect(job.discard).toHaveBeenCalledTimes(1);
    expect(job.update).toHaveBeenCalledWith({
      ...toolCall,
      failure: { name: 'McpTransportError', message: 'reset', delivered: true, fields: { status: 502 } },
    });
  });

  it('lets Bull retry a tools/call whose failure proves it never left', async () => {
    const job = fakeJob({ ...toolCall });
    const { run } = worker(async () => Promise.reject(new McpTransportError('ECONNREFUSED', false)));
    await expect(run(job)).rejects.toThrow('ECONNREFUSED');
    expect(job.discard).not.toHaveBeenCalled();
    expect(job.update.mock.calls[0]).toEqual([
      expect.objectContaining({ failure: expect.objectContaining({ delivered: false }) }),
    ]);
  });

  it('ends the job on its last attempt, and not before', async () => {
    const { run } = worker(async () => Promise.reject(new McpTransportError('ECONNREFUSED', false)));
    const second = fakeJob({ ...toolCall }, 1, 3);
    await run(second).catch(() => undefined);
    expect(second.discard).not.toHaveBeenCalled();
    const last = fakeJob({ ...toolCall }, 2, 3);
    await run(last).catch(() => undefined);
    expect(last.discard).toHaveBeenCalledTimes(1);
    const single = { ...fakeJob({ ...toolCall }, 0), opts: {} } as unknown as ReturnType<typeof fakeJob>;
    await run(single).catch(() => undefined);
    expect(single.discard).toHaveBeenCalledTimes(1);
  });

  it("ends the job when Bull's next backoff would start after the caller deadline", async () => {
    const now = Date.now();
    jest.useFakeTimers({ now });
    try {
      const { run } = worker(async () => Promise.reject(new McpTransportError('ECONNREFUSED', false)));
      // After attempt 2 (attemptsMade 1) Bull waits (2^2 - 1) * 100 = 300 ms.
      const late = fakeJob({ ...toolCall, deadlineAt: now + 300 }, 1);
      await run(late).catch(() => undefined);
      expect(late.discard).toHaveBeenCalledTimes(1);
      const inTime = fakeJob({ ...toolCall, deadlineAt: now + 301 }, 1);
      await run(inTime).catch(() => undefined);
      expect(inTime.discard).not.toHaveBeenCalled();
    } finally {
      jest.useRealTimers();
    }
  });

  it('still throws the failure when it cannot be recorded', async () => {
    const job = fakeJob({ ...toolCall });
    job.update.mockRejectedValueOnce(new Error('redis gone'));
    const { run } = worker(async () => Promise.reject(new McpTransportError('reset', true)));
    await expect(run(job)).rejects.toThrow('reset');
  });
});

describe('BullCallQueue enqueueing and reading', () => {
  it('enqueues with the configured attempts, exponential backoff and a retention in whole seconds', async () => {
    const { queue, bull } = worker(async () => ({}));
    await expect(queue.submit(toolCall)).resolves.toBe('42');
    expect(bull.added[0]).toEqual({
      data: toolCall,
      opts: {
        jobId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        attempts: 3,
        backoff: { type: 'exponential', delay: 100 },
        removeOnComplete: { age: 91 },
        removeOnFail: { age: 91 },
      },
    });
  });

  it('names every job itself, a new id per call, so that an enqueue sent again by ioredis adds nothing', async () => {
    const { queue, bull } = worker(async () => ({}));
    await queue.submit(toolCall);
    await queue.submit(toolCall);
    await queue.submit(toolCall, 'chosen-id');
    const ids = bull.added.map((added) => (added.opts as { jobId?: string }).jobId);
    expect(ids[0]).toEqual(expect.any(String));
    expect(ids[1]).toEqual(expect.any(String));
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[2]).toBe('chosen-id');
  });

  it('does not start a worker when this process is not one', () => {
    const queue = new BullCallQueue({ ...options, worker: false }, {
      process: jest.fn(),
    } as unknown as McpCallProcessor);
    queue.start();
    expect(FakeBullQueue.last.handler).toBeUndefined();
  });

  it('refuses to enqueue while Redis is down, saying nothing was sent', async () => {
    const { queue, bull } = worker(async () => ({}));
    bull.client.status = 'end';
    const error = await queue.submit(toolCall).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect((error as McpQueueUnavailableError).delivered).toBe(false);
    expect(bull.added).toHaveLength(0);
  });

  it('reads the state of a finished call, and forgets it keepResultsMs after it finished', async () => {
    const { queue, bull } = worker(async () => ({}));
    const remove = jest.fn(async () => undefined);
    const job = {
      id: '5',
      finishedOn: Date.now(),
      returnvalue: { ok: 1 },
      data: toolCall,
      getState: async () => 'completed',
      remove,
    };
    bull.jobs.set('5', job);
    await expect(queue.state('5')).resolves.toEqual({ id: '5', state: 'completed', result: { ok: 1 } });
    job.finishedOn = Date.now() - 90_500;
    await expect(queue.state('5')).rejects.toBeInstanceOf(McpCallNotFoundError);
    expect(remove).toHaveBeenCalled();
    await expect(queue.state('6')).rejects.toBeInstanceOf(McpCallNotFoundError);
  });

  it('reads a failed call as its decoded typed failure, and a running one as pending', async () => {
    const { queue, bull } = worker(async () => ({}));
    const failure = { name: 'McpTransportError', message: 'reset', delivered: true, fields: { status: 502 } };
    bull.jobs.set('8', { id: '8', data: { ...toolCall, failure }, getState: async () => 'failed' });
    bull.jobs.set('9', { id: '9', data: toolCall, getState: async () => 'active' });
    bull.jobs.set('10', { id: '10', data: toolCall, failedReason: 'stalled', getState: async () => 'failed' });
    const failed = await queue.state('8');
    expect(failed.state).toBe('failed');
    expect(failed.error).toBeInstanceOf(McpTransportError);
    expect((failed.error as McpTransportError).delivered).toBe(true);
    expect((failed.error as McpTransportError).status).toBe(502);
    await expect(queue.state('9')).resolves.toEqual({ id: '9', state: 'pending' });
    const stalled = await queue.state('10');
    expect(stalled.error).toBeInstanceOf(McpTransportError);
    expect(stalled.error!.message).toBe('Call 10 failed: stalled');
    expect((stalled.error as McpTransportError).delivered).toBe(true);
  });
});

describe('BullCallQueue waiters', () => {
  /** A job as Bull returns it, whose state the test moves on. */
  function storedJob(bull: FakeBullQueue, id: string, state: string, extra: Record<string, unknown> = {}) {
    const job: Record<string, unknown> = { id, data: toolCall, getState: async () => job.state, state, ...extra };
    bull.jobs.set(id, job);
    return job;
  }

  /**
   * Drops the subscription to outcomes while a caller waits for job `id` (stored as active), and
   * checks that this caller is refused.
   */
  async function dropSubscriptionUnderWaiter(queue: BullCallQueue, bull: FakeBullQueue, id: string) {
    storedJob(bull, id, 'active');
    const before = queue.wait(id).catch((e: unknown) => e);
    await until(() => queue.waiting === 1, 'the first waiter');
    bull.eclient.emit('close');
    expect(await before).toBeInstanceOf(McpQueueUnavailableError);
  }

  it('returns the result of a call that already completed, reading the job again once it is final', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '1', 'completed', { returnvalue: { done: 1 } });
    await expect(queue.wait('1')).resolves.toEqual({ done: 1 });
    expect(queue.waiting).toBe(0);
  });

  it('throws the typed failure of a call that already failed', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '2', 'failed', {
      data: { ...toolCall, failure: { name: 'McpTransportError', message: 'reset', delivered: false, fields: {} } },
    });
    const error = await queue.wait('2').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ message: 'reset', delivered: false });
    expect(queue.waiting).toBe(0);
  });

  it('settles every waiter of a running call on its completion event, with the published value', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '3', 'active');
    const first = queue.wait('3');
    const second = queue.wait('3');
    await until(() => queue.waiting === 2, 'two waiters');
    bull.emit('global:completed', 3, JSON.stringify({ value: 'published' }));
    await expect(first).resolves.toEqual({ value: 'published' });
    await expect(second).resolves.toEqual({ value: 'published' });
    expect(queue.waiting).toBe(0);
  });

  it('rejects the waiters of a running call with its typed failure on its failed event', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    const job = storedJob(bull, '4', 'active');
    const waiting = queue.wait('4').catch((e: unknown) => e);
    await until(() => queue.waiting === 1, 'the waiter');
    job.data = {
      ...toolCall,
      failure: { name: 'McpTransportError', message: 'gone', delivered: true, fields: { status: 500 } },
    };
    bull.emit('global:failed', '4', 'gone');
    const error = await waiting;
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ message: 'gone', delivered: true, status: 500 });
  });

  it('ignores the events of other calls', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '5', 'active');
    const waiting = queue.wait('5');
    await until(() => queue.waiting === 1, 'the waiter');
    bull.emit('global:completed', '55', JSON.stringify({ other: true }));
    bull.emit('global:failed', '6', 'other');
    expect(queue.waiting).toBe(1);
    bull.emit('global:completed', '5', JSON.stringify({ mine: true }));
    await expect(waiting).resolves.toEqual({ mine: true });
  });

  it('gives up after the wait timeout with McpCallWaitTimeoutError and leaves no waiter behind', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '7', 'waiting');
    const error = await queue.wait('7', 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpCallWaitTimeoutError);
    expect(error).toMatchObject({ callId: '7', timeoutMs: 20, delivered: true });
    expect(queue.waiting).toBe(0);
  });

  it('rejects an unknown call id with McpCallNotFoundError and leaves no waiter behind', async () => {
    const { queue } = worker(async () => ({}), { worker: false });
    const error = await queue.wait('404').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpCallNotFoundError);
    expect(queue.waiting).toBe(0);
  });

  it('refuses to wait while Redis is down, saying the call may have been sent', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '8', 'active');
    bull.client.status = 'reconnecting';
    const error = await queue.wait('8').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ delivered: true });
    expect((error as Error).message).toContain('reconnecting');
    expect(queue.waiting).toBe(0);
  });

  it('rejects every waiter when the connection closes: their outcomes could no longer be heard', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '9', 'active');
    storedJob(bull, '10', 'active');
    const waits = [queue.wait('9').catch((e: unknown) => e), queue.wait('10').catch((e: unknown) => e)];
    await until(() => queue.waiting === 2, 'two waiters');
    bull.client.emit('close');
    for (const error of await Promise.all(waits)) {
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(error).toMatchObject({ delivered: true });
    }
    expect(queue.waiting).toBe(0);
  });

  it('rejects every waiter when the subscription carrying outcomes drops, though the command connection is up', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    storedJob(bull, '12', 'active');
    const wait = queue.wait('12').catch((e: unknown) => e);
    await until(() => queue.waiting === 1, 'one waiter');
    bull.eclient.emit('close');
    const error = await wait;
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ delivered: true });
    expect((error as Error).message).toContain('subscription to outcomes was lost');
    expect(queue.waiting).toBe(0);
  });

  it('reads the calls waited for again once the subscription is back: an outcome published while it was down is not missed', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    await dropSubscriptionUnderWaiter(queue, bull, '20');
    // Callers that came while the subscription was down; their calls end before it is back.
    const done = storedJob(bull, '21', 'active');
    const failed = storedJob(bull, '22', 'active');
    const running = storedJob(bull, '23', 'active');
    const waits = [
      queue.wait('21'),
      queue.wait('22').catch((e: unknown) => e),
      queue.wait('23', 200).catch((e: unknown) => e),
    ];
    await until(() => queue.waiting === 3, 'three waiters');
    Object.assign(done, { state: 'completed', returnvalue: { missed: false } });
    Object.assign(failed, {
      state: 'failed',
      data: { ...toolCall, failure: { name: 'McpTransportError', message: 'reset', delivered: true, fields: {} } },
    });
    bull.eclient.emit('ready');
    await expect(waits[0]).resolves.toEqual({ missed: false });
    expect(await waits[1]).toMatchObject({ message: 'reset', delivered: true });
    // A call still running goes on waiting for its event.
    expect(queue.waiting).toBe(1);
    bull.emit('global:completed', '23', JSON.stringify({ late: true }));
    await expect(waits[2]).resolves.toEqual({ late: true });
    expect(running.state).toBe('active');
  });

  it('reads the calls waited for only once Redis has carried out the resubscription: an outcome published in between is not missed', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    await dropSubscriptionUnderWaiter(queue, bull, '25');
    const job = storedJob(bull, '26', 'active');
    const wait = queue.wait('26', 60_000);
    await until(() => queue.waiting === 1, 'the waiter');
    // The connection is back and ioredis has sent SUBSCRIBE again, but Redis has not carried it
    // out yet: the PING behind it is not answered.
    let answerPing!: () => void;
    bull.eclient.ping.mockImplementationOnce(() => new Promise((resolve) => (answerPing = () => resolve('PONG'))));
    const reads = jest.spyOn(bull, 'getJob');
    bull.eclient.emit('ready');
    await until(() => bull.eclient.ping.mock.calls.length === 1, 'the PING after the resubscription');
    // Nothing is read before the subscription is in place: a read now could see the call still
    // running, and its outcome, published before the SUBSCRIBE took effect, would never arrive.
    expect(reads).not.toHaveBeenCalled();
    // The call ends in that gap; its completion event reaches no subscription.
    Object.assign(job, { state: 'completed', returnvalue: { inTheGap: true } });
    answerPing();
    await expect(wait).resolves.toEqual({ inTheGap: true });
    expect(reads).toHaveBeenCalledWith('26');
    expect(queue.waiting).toBe(0);
  });

  it('refuses at once a call waited for whose job the queue lost while the subscription was down (a failover)', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    await dropSubscriptionUnderWaiter(queue, bull, '24');
    // The caller waits again while the subscription is down; the failover loses the job meanwhile.
    const wait = queue.wait('24', 60_000).catch((e: unknown) => e);
    await until(() => queue.waiting === 1, 'the second waiter');
    bull.jobs.delete('24');
    bull.eclient.emit('ready');
    // Refused as soon as the subscription is back, not at the 60 s deadline (McpCallWaitTimeoutError).
    const error = await wait;
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ delivered: true });
    expect((error as Error).message).toContain('no longer holds call 24');
    expect(queue.waiting).toBe(0);
  });

  it('bounds a Redis command by commandTimeoutMs; a read that timed out had no effect (delivered: false)', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false, commandTimeoutMs: 20 });
    bull.getJob = () => new Promise(() => undefined);
    const error = await queue.state('11').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ delivered: false });
    expect((error as Error).message).toContain('20 ms');
  });

  it('turns a failed Redis command into McpQueueUnavailableError carrying its message', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    bull.add = async () => {
      throw new Error('OOM command not allowed');
    };
    const error = await queue.submit(toolCall).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ delivered: true });
    expect((error as Error).message).toContain('OOM command not allowed');
  });

  it('close rejects the waiters, and drops the connections when Bull cannot close within commandTimeoutMs', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false, commandTimeoutMs: 20 });
    storedJob(bull, '12', 'active');
    const waiting = queue.wait('12').catch((e: unknown) => e);
    await until(() => queue.waiting === 1, 'the waiter');
    bull.closing = () => new Promise(() => undefined);
    await queue.close();
    expect(await waiting).toBeInstanceOf(McpQueueUnavailableError);
    expect(bull.clients.map((client) => client.disconnect.mock.calls.length)).toEqual([1, 1]);
  });

  it('close keeps the connections to Bull when it closes in time', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false, commandTimeoutMs: 5_000 });
    await queue.close();
    expect(bull.clients.map((client) => client.disconnect.mock.calls.length)).toEqual([0, 0]);
  });

  it('hands the server notifications published as job progress to every listener, as text or object', () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    const heard: unknown[] = [];
    queue.onNotification((server, notification) => heard.push({ server, notification }));
    const notification = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };
    bull.emit('global:progress', '1', JSON.stringify({ server: 'srv', notification }));
    bull.emit('global:progress', '2', { server: 'other', notification });
    bull.emit('global:progress', '3', 50);
    expect(heard).toEqual([
      { server: 'srv', notification },
      { server: 'other', notification },
    ]);
  });
});

describe('BullCallQueue: what a Redis failure says about the call', () => {
  const failingCommand = async () => {
    throw new Error('READONLY You cannot write against a read only replica');
  };

  it('a claim whose SET NX fails or times out refuses to send, saying the call was not delivered', async () => {
    for (const set of [failingCommand, () => new Promise(() => undefined)]) {
      const errors: unknown[] = [];
      const { bull, run } = worker(
        async (_job, attempt) => {
          errors.push(await attempt.claim().catch((e: unknown) => e));
          return {};
        },
        { commandTimeoutMs: 20 },
      );
      bull.client.set.mockImplementation(set as never);
      await run(fakeJob({ ...toolCall }));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(McpQueueUnavailableError);
      expect(errors[0]).toMatchObject({ operation: 'at-most-once mark', delivered: false });
    }
  });

  it('a release that fails says the call was not delivered, and names the operation', async () => {
    const errors: unknown[] = [];
    const { bull, run } = worker(async (_job, attempt) => {
      await attempt.claim();
      errors.push(await attempt.release().catch((e: unknown) => e));
      return {};
    });
    bull.client.del.mockImplementation(failingCommand as never);
    await run(fakeJob({ ...toolCall }));
    expect(errors[0]).toBeInstanceOf(McpQueueUnavailableError);
    expect(errors[0]).toMatchObject({ operation: 'release the at-most-once mark', delivered: false });
    expect((errors[0] as Error).message).toContain('READONLY');
  });

  it('an enqueue that failed may have been stored (delivered: true); reads that failed had no effect (delivered: false)', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false, commandTimeoutMs: 20 });
    bull.add = failingCommand;
    await expect(queue.submit(toolCall)).rejects.toMatchObject({ operation: 'enqueue', delivered: true });
    bull.getJob = (() => new Promise(() => undefined)) as never;
    await expect(queue.state('1')).rejects.toMatchObject({ operation: 'read job', delivered: false });
    bull.getJob = async () => ({ id: '1', data: toolCall, getState: () => new Promise(() => undefined) });
    await expect(queue.state('1')).rejects.toMatchObject({ operation: 'state', delivered: false });
  });

  it('a command refused while Redis is down names the operation and the connection state', async () => {
    const { queue, bull } = worker(async () => ({}), { worker: false });
    bull.client.status = 'end';
    const error = await queue.state('1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ operation: 'read job', reason: 'the connection to Redis is end', delivered: false });
  });
});

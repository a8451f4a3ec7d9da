import { Logger } from '@nestjs/common';
import type Bull from 'bull';
import type { Job, Queue } from 'bull';
import { EventEmitter, once } from 'node:events';
import { McpCallNotFoundError } from '../../errors/mcp-client-call.errors';
import { McpTransportError } from '../../errors/mcp-client.errors';
import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallJob, McpCallState } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { requireOptionalPeer } from '../../optional-peer';
import { decodeCallError, encodeCallError, type EncodedCallError } from './call-error-codec';
import type { McpCallNotificationListener, McpCallQueue } from './mcp-call-queue.interface';
import { isRetryable, retryStartsInTime } from './retry-policy';

/** Job data in Redis: the call, plus the typed failure of the last attempt. */
type McpCallJobData = McpCallJob & { failure?: EncodedCallError };

/** Job progress carrying a server notification to every process that listens. */
interface NotificationProgress {
  server: string;
  notification: JsonRpcNotification;
}

/**
 * Calls as Bull jobs on Redis: any process may enqueue, any worker runs them, and the outcome
 * (return value, or the typed failure kept in the job data) is readable from any process.
 * Before a `tools/call` reaches its transport the job is marked attempted (Redis SET NX), so a
 * re-run after its worker died fails with `McpCallInterruptedError` instead of sending twice.
 */
export class BullCallQueue implements McpCallQueue {
  /** @inheritdoc */
  readonly mode = 'bull' as const;
  private readonly logger = new Logger(BullCallQueue.name);
  private readonly queue: Queue<McpCallJobData>;
  private readonly events = new EventEmitter();
  private readonly waiters = new Map<string, Array<(outcome: { ok: boolean; value?: unknown }) => void>>();
  private listening?: Promise<unknown>;

  constructor(
    private readonly options: McpResolvedQueueOptions,
    private readonly processor: McpCallProcessor,
  ) {
    const BullQueue = requireOptionalPeer<typeof Bull>('bull', 'McpClientModule queue.redis (Bull)');
    this.queue = new BullQueue<McpCallJobData>(options.name, options.bull ?? {});
    this.queue.on('error', (error) => this.logger.error(`Queue "${options.name}": ${error.message}`));
    this.queue.on('global:progress', (jobId: string, progress: unknown) => {
      const data = (typeof progress === 'string' ? JSON.parse(progress) : progress) as NotificationProgress | null;
      if (data?.notification) this.events.emit('notification', data.server, data.notification);
    });
  }

  /** The Bull queue (for inspection, metrics and tests). */
  get bull(): Queue<McpCallJobData> {
    return this.queue;
  }

  /** @inheritdoc */
  start(): void {
    if (!this.options.worker) return;
    void this.queue.process(this.options.concurrency, (job) => this.run(job)).catch((error: Error) => this.logger.error(`Worker stopped: ${error.message}`));
  }

  /** @inheritdoc */
  async submit(job: McpCallJob): Promise<string> {
    const keep = { age: Math.ceil(this.options.keepResultsMs / 1000) };
    const added = await this.queue.add(job, {
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: this.options.backoffMs },
      removeOnComplete: keep,
      removeOnFail: keep,
    });
    return String(added.id);
  }

  /** @inheritdoc */
  async execute(job: McpCallJob): Promise<Record<string, unknown>> {
    return this.wait(await this.submit(job));
  }

  /** @inheritdoc */
  async state(id: string): Promise<McpCallState> {
    const state = await (await this.job(id)).getState();
    if (state !== 'completed' && state !== 'failed') return { id, state: 'pending' };
    // Read the job again once it is final: a copy read while it ran has no outcome yet.
    const job = await this.job(id);
    if (state === 'completed') return { id, state: 'completed', result: job.returnvalue as Record<string, unknown> };
    return { id, state: 'failed', error: this.failure(job) };
  }

  /** @inheritdoc */
  async wait(id: string): Promise<Record<string, unknown>> {
    await this.listen();
    // Register before reading the state, so an outcome published in between is not missed.
    const settled = new Promise<{ ok: boolean; value?: unknown }>((resolve) => this.waiters.set(id, [...(this.waiters.get(id) ?? []), resolve]));
    try {
      const state = await (await this.job(id)).getState();
      // Read the job again once it is final: a copy read while it ran has no return value yet.
      if (state === 'completed') this.settle(id, { ok: true, value: (await this.job(id)).returnvalue });
      if (state === 'failed') this.settle(id, { ok: false });
    } catch (error) {
      this.waiters.delete(id);
      throw error;
    }
    const outcome = await settled;
    if (outcome.ok) return outcome.value as Record<string, unknown>;
    throw this.failure(await this.job(id));
  }

  /** One subscription to the queue's global outcome events serves every waiter of this process. */
  private listen(): Promise<unknown> {
    this.listening ??= (async () => {
      const registered = Promise.all([once(this.queue, 'registered:global:completed'), once(this.queue, 'registered:global:failed')]);
      this.queue.on('global:completed', (jobId: string, value: string) => this.settle(String(jobId), { ok: true, value: JSON.parse(value) }));
      this.queue.on('global:failed', (jobId: string) => this.settle(String(jobId), { ok: false }));
      await registered;
    })();
    return this.listening;
  }

  private settle(id: string, outcome: { ok: boolean; value?: unknown }): void {
    const waiters = this.waiters.get(id);
    if (!waiters) return;
    this.waiters.delete(id);
    waiters.forEach((resolve) => resolve(outcome));
  }

  /** @inheritdoc */
  onNotification(listener: McpCallNotificationListener): void {
    this.events.on('notification', listener);
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    await this.queue.close();
  }

  /**
   * The job of a call while its outcome is kept. Bull removes finished jobs older than
   * `keepResultsMs` only when a later job of the queue finishes, so on an idle queue the age is
   * checked here too.
   */
  private async job(id: string): Promise<Job<McpCallJobData>> {
    const job = await this.queue.getJob(id);
    if (!job) throw new McpCallNotFoundError(id);
    if (job.finishedOn && job.finishedOn + this.options.keepResultsMs <= Date.now()) {
      await job.remove().catch(() => undefined);
      throw new McpCallNotFoundError(id);
    }
    return job;
  }

  private failure(job: Job<McpCallJobData>): Error {
    if (job.data.failure) return decodeCallError(job.data.failure);
    return new McpTransportError(`Call ${job.id} failed: ${job.failedReason ?? 'unknown reason'}`, true);
  }

  private async run(job: Job<McpCallJobData>): Promise<Record<string, unknown>> {
    const { failure: _previous, ...call } = job.data;
    const markKey = `${this.options.bull?.prefix ?? 'bull'}:${this.options.name}:mcp-attempted:${job.id}`;
    const ttl = Math.ceil(this.options.keepResultsMs / 1000);
    const attempt: McpCallAttempt = {
      id: String(job.id),
      claim: async () => (await this.queue.client.set(markKey, String(process.pid), 'EX', ttl, 'NX')) === 'OK',
      release: async () => void (await this.queue.client.del(markKey)),
      notify: (server, notification) => void job.progress({ server, notification } satisfies NotificationProgress).catch(() => undefined),
    };
    try {
      return await this.processor.process(call, attempt);
    } catch (error) {
      // Bull's exponential backoff before the next attempt: (2^attemptsMade - 1) * delay.
      const nextDelay = (2 ** (job.attemptsMade + 1) - 1) * this.options.backoffMs;
      const final = !isRetryable(call.method, error) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1) || !retryStartsInTime(call, nextDelay);
      await job.update({ ...call, failure: encodeCallError(error) });
      if (final) job.discard();
      throw error;
    }
  }
}

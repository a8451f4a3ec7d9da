import { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { McpCallNotFoundError } from '../../errors/mcp-client-call.errors';
import { McpTransportError } from '../../errors/mcp-client.errors';
import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallEvent, McpCallJob, McpCallState } from '../interfaces/mcp-call.interface';
import { McpCallAbortedError, abortReasonText } from '../mcp-call-aborted.errors';
import { McpMethod } from '../../protocol/mcp-methods';
import { BullCallChannels } from './bull-call-channels';
import { BullCallRequestRelay, answerCallRequests } from './bull-call-requests';
import type { McpCallAttempt, McpStoredTask } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { bullKeyPrefix, createBullQueue, queueConnection } from '../../bull-queue.factory';
import { McpRedisOutageLog } from '../../redis-outage-log';
import { defaultMarkReplicas, isClusterClient, onClusterSlotLost, type McpRedisClient } from '../../redis-connection';
import { BullCallMarks } from './bull-call-marks';
import { decodeCallError, encodeCallError, type EncodedCallError } from './call-error-codec';
import type {
  McpCallNotificationListener,
  McpCallQueue,
  McpCallQueueStats,
  McpCallWatch,
} from './mcp-call-queue.interface';
import { isRetryable, retryStartsInTime } from './retry-policy';
import { runQueuedAttempt } from './queue-telemetry';
import { observeGauge } from '../../telemetry/mcp-metrics';

/** Job data in Redis: the call, plus the typed failure of the last attempt. */
type McpCallJobData = McpCallJob & { failure?: EncodedCallError };

/** What a waiter receives: the job's outcome, or why it can no longer be awaited. */
type Outcome = { ok: true; value: unknown } | { ok: false; error?: Error };

/** An abort request published to the workers. */
interface AbortMessage {
  id: string;
  reason?: string;
}

/** A call event as a worker publishes it: the run that sent it (`r`) and its number in that run (`n`, from 1). */
type SentEvent = McpCallEvent & { r?: string; n?: number };

/**
 * The caller's handler of a call's events channel: hands each event to `onEvent` once. An event
 * comes twice when ioredis sent the worker's PUBLISH again after its reply was lost with the
 * connection; the copy's number is not above the last one seen from its run. A message without
 * them (a worker of an earlier version) is passed on as it is.
 */
function eventsOnce(onEvent: (event: McpCallEvent) => void): (message: string) => void {
  const last = new Map<string, number>();
  return (message) => {
    const { r, n, ...event } = JSON.parse(message) as SentEvent;
    if (r !== undefined && n !== undefined) {
      if (n <= (last.get(r) ?? 0)) return;
      last.set(r, n);
    }
    onEvent(event);
  };
}

/** ioredis states in which a command is sent (or queued until the first connect), not refused. */
const USABLE_STATES = new Set(['ready', 'connect', 'connecting', 'wait']);

/** Job progress carrying a server notification to every process that listens. */
interface NotificationProgress {
  server: string;
  notification: JsonRpcNotification;
}

/**
 * Calls as Bull jobs on Redis: any process may enqueue, any worker runs them, and the outcome
 * (return value, or the typed failure kept in the job data) is readable from any process.
 * Before a `tools/call` reaches its transport the job is marked attempted (Redis SET NX), so a
 * re-run after its worker died fails with `McpCallInterruptedError` instead of sending twice. On
 * a replicated Redis the call is sent only once replicas acknowledged the mark (Redis WAIT), so a
 * failover cannot lose it: `markReplicas` of them, or (`'auto'`) one while the master has one.
 *
 * Redis outages fail fast: while the connection is down every command is refused with
 * `McpQueueUnavailableError` (nothing was sent, `delivered: false`), a command on a live
 * connection is bounded by `commandTimeoutMs`, and waiters are rejected when the connection
 * drops. Bull and ioredis reconnect by themselves, so the queue works again once Redis is back.
 */
export class BullCallQueue implements McpCallQueue {
  /** @inheritdoc */
  readonly mode = 'bull' as const;
  private readonly logger = new Logger(BullCallQueue.name);
  private readonly queue: Queue<McpCallJobData>;
  private readonly events = new EventEmitter();
  private readonly waiters = new Map<string, Array<(outcome: Outcome) => void>>();
  private listening?: Promise<unknown>;
  private readonly channels: BullCallChannels;
  /** Calls this worker runs that the caller may abort, by job id. */
  private readonly running = new Map<string, AbortController>();
  private abortListener?: Promise<unknown>;
  private unobserve?: () => void;
  /** Bull's key prefix of the queue (hash-tagged on a Cluster): the call's own keys sit beside its jobs. */
  readonly keyPrefix: string;
  /** The at-most-once marks of the queue's `tools/call` jobs, and their replicas' acknowledgement. */
  private readonly marks: BullCallMarks;
  private readonly outages = new McpRedisOutageLog(this.logger, 'error');

  constructor(
    private readonly options: McpResolvedQueueOptions,
    private readonly processor: McpCallProcessor,
  ) {
    this.queue = createBullQueue<McpCallJobData>(
      { feature: 'McpClientModule redis (Bull)', role: 'Queue', name: options.name, options: options.bull ?? {} },
      this.outages,
    );
    const spec = { options: options.bull ?? {} };
    this.keyPrefix = bullKeyPrefix(spec);
    this.channels = new BullCallChannels(this.queue.client, `${this.keyPrefix}:${options.name}`, queueConnection(spec));
    // A waiter cannot hear outcomes while the connection is down (pub/sub messages are lost).
    const lost = (what: string) => () =>
      this.failWaiters(
        new McpQueueUnavailableError('wait', `${what}; the call may still run, read getCallResult later`, true),
      );
    this.queue.client.on('close', lost('the connection to Redis closed'));
    const client = this.queue.client as unknown as McpRedisClient;
    this.marks = new BullCallMarks(
      client,
      {
        queueName: options.name,
        commandTimeoutMs: options.commandTimeoutMs,
        replicas: options.markReplicas ?? defaultMarkReplicas(client),
      },
      this.command.bind(this),
      this.outages,
      this.logger,
    );
    // On a Cluster the connection stays up when the master of the queue's slot dies: its jobs'
    // last writes and outcome messages may be gone with it, so waiters hear it now instead of at
    // their deadline.
    if (isClusterClient(client))
      onClusterSlotLost(
        client,
        `${this.keyPrefix}:${options.name}:`,
        lost('the Redis Cluster node of the queue was lost'),
      );
    this.queue.on('global:progress', (jobId: string, progress: unknown) => {
      const data = (typeof progress === 'string' ? JSON.parse(progress) : progress) as NotificationProgress | null;
      if (data?.notification) this.events.emit('notification', data.server, data.notification);
    });
  }

  /**
   * Replicas that must acknowledge a call's at-most-once mark before the call is sent:
   * `queue.markReplicas` (strict), else `'auto'` on a Sentinel group or a Cluster (one while the
   * master lists a connected replica, none while it lists none) and 0 on a single node.
   */
  get markReplicas(): number | 'auto' {
    return this.marks.replicas;
  }

  /** The Bull queue (for inspection, metrics and tests). */
  get bull(): Queue<McpCallJobData> {
    return this.queue;
  }

  /** @inheritdoc */
  start(): void {
    this.unobserve ??= observeGauge('mcp.client.queue.depth', async () => {
      const counts = await this.command('job counts', false, () => this.queue.getJobCounts());
      return (['waiting', 'active', 'delayed'] as const).map((state) => ({
        value: counts[state] ?? 0,
        attributes: { 'mcp.queue.name': this.options.name, 'mcp.queue.state': state },
      }));
    });
    if (!this.options.worker) return;
    // Opened before the first job, so that its first mark does not wait for the connection.
    this.marks.open();
    void this.queue
      .process(this.options.concurrency, (job) => this.run(job))
      .catch((error: Error) => this.logger.error(`Worker stopped: ${error.message}`));
  }

  /**
   * Enqueues the call as job `jobId` (a new UUID when not given) and resolves its id. The id is
   * always chosen here, never by Bull's counter: ioredis sends a command again on its next
   * connection when the reply was lost with the last one (a failover, a dropped link), and Bull
   * adds a job under an id it already holds only once, where a counted id would queue the call
   * a second time.
   */
  async submit(job: McpCallJob, jobId: string = randomUUID()): Promise<string> {
    const keep = { age: Math.ceil(this.options.keepResultsMs / 1000) };
    const added = await this.command('enqueue', true, () =>
      this.queue.add(job, {
        jobId,
        attempts: this.options.attempts,
        backoff: { type: 'exponential', delay: this.options.backoffMs },
        removeOnComplete: keep,
        removeOnFail: keep,
      }),
    );
    return String(added.id);
  }

  /**
   * Enqueues the call and waits for its outcome. With `watch.onEvent` this process subscribes to
   * the call's events channel before the job exists (so no event is missed) and unsubscribes once
   * the outcome is known, whatever it is. With `watch.signal` an abort drops a job still queued,
   * or asks the worker running it to cancel (see `abort`). With `watch.onServerRequest` this
   * process answers the server's requests the worker relays to it (see `BullCallRequestRelay`).
   */
  async execute(job: McpCallJob, watch: McpCallWatch = {}): Promise<Record<string, unknown>> {
    const { signal, onEvent, onServerRequest } = watch;
    if (!signal && !onEvent && !onServerRequest) return this.wait(await this.submit(job));
    if (signal?.aborted) throw new McpCallAbortedError(job.server, job.method, false, abortReasonText(signal.reason));
    const id = randomUUID();
    const unsubscribe = onEvent
      ? await this.command('subscribe', false, () =>
          this.channels.subscribe(this.channels.eventsChannel(id), eventsOnce(onEvent)),
        )
      : undefined;
    let stopAnswering: (() => Promise<void>) | undefined;
    let aborting: Promise<McpCallAbortedError | null> | undefined;
    const onAbort = () => {
      aborting ??= this.abort(job, id, signal?.reason).catch((error: Error) => {
        this.logger.warn(`Aborting call ${id} failed: ${error.message}`);
        return null;
      });
    };
    try {
      if (onServerRequest) {
        const ttlMs = (job.deadlineAt ?? Date.now() + job.timeoutMs) - Date.now() + this.options.commandTimeoutMs;
        stopAnswering = await this.command('subscribe', false, () =>
          answerCallRequests(this.queue.client, this.channels, id, ttlMs, onServerRequest, signal),
        );
      }
      await this.submit(
        { ...job, abortable: signal !== undefined, ...(onServerRequest ? { answerable: true } : {}) },
        id,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      try {
        return await this.wait(id);
      } catch (error) {
        // A job the abort removed may be gone before its waiter was registered.
        throw (aborting && (await aborting)) ?? error;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Awaited: the last events reach `onEvent` before the caller sees the outcome.
      await unsubscribe?.().catch(() => undefined);
      await stopAnswering?.().catch(() => undefined);
    }
  }

  /**
   * Aborts call `id` of this queue. A `tools/call` not yet sent is stopped for good by taking its
   * at-most-once mark first (a worker then refuses to send it); a job still queued is removed.
   * Either way its waiters get `McpCallAbortedError` (not delivered) at once. Otherwise the abort
   * is recorded (for a worker about to start it) and published to the worker running it, which
   * cancels the request and fails the call with the error that says whether it was sent.
   */
  private async abort(job: McpCallJob, id: string, reason: unknown): Promise<McpCallAbortedError | null> {
    const text = abortReasonText(reason);
    const ttl = Math.ceil(this.options.keepResultsMs / 1000);
    await this.command('abort', true, () => this.queue.client.set(this.channels.abortedKey(id), text ?? '', 'EX', ttl));
    let stopped = false;
    if (job.method === McpMethod.ToolsCall) {
      stopped = await this.marks.takeForAbort(this.markKey(id), ttl);
    }
    const queued = await this.job(id).catch(() => null);
    const state = queued ? await this.command('state', false, () => queued.getState()).catch(() => null) : null;
    if (queued && (state === 'waiting' || state === 'delayed' || state === 'paused')) {
      // Bull refuses to remove a job a worker holds (locked): it then runs, and sees the abort.
      stopped =
        (await queued.remove().then(
          () => true,
          () => false,
        )) || stopped;
    }
    if (stopped) {
      const error = new McpCallAbortedError(job.server, job.method, false, text);
      this.settle(id, { ok: false, error });
      return error;
    }
    await this.command('abort', true, () =>
      this.queue.client.publish(
        this.channels.abortChannel,
        JSON.stringify({ id, ...(text !== undefined ? { reason: text } : {}) } satisfies AbortMessage),
      ),
    );
    return null;
  }

  /** Where the task a call created is kept (JSON `McpStoredTask`), for a later run to resume. */
  private taskKey(id: string): string {
    return `${this.keyPrefix}:${this.options.name}:mcp-task:${id}`;
  }

  private markKey(id: string): string {
    return `${this.keyPrefix}:${this.options.name}:mcp-attempted:${id}`;
  }

  /** Number of call event channels this process is subscribed to (for tests and metrics). */
  get subscriptions(): number {
    return this.channels.subscriptions;
  }

  /** The worker's subscription to abort requests, made once, before the first abortable job runs. */
  private listenForAborts(): Promise<unknown> {
    this.abortListener ??= this.channels
      .subscribe(this.channels.abortChannel, (message) => {
        const { id, reason } = JSON.parse(message) as AbortMessage;
        this.running.get(id)?.abort(reason);
      })
      .catch((error: unknown) => {
        this.abortListener = undefined;
        throw error;
      });
    return this.abortListener;
  }

  /** @inheritdoc */
  async state(id: string): Promise<McpCallState> {
    const current = await this.job(id);
    const state = await this.command('state', false, () => current.getState());
    if (state !== 'completed' && state !== 'failed') return { id, state: 'pending' };
    // Read the job again once it is final: a copy read while it ran has no outcome yet.
    const job = await this.job(id);
    if (state === 'completed') return { id, state: 'completed', result: job.returnvalue as Record<string, unknown> };
    return { id, state: 'failed', error: this.failure(job) };
  }

  /** @inheritdoc */
  async wait(id: string, timeoutMs = this.options.waitTimeoutMs): Promise<Record<string, unknown>> {
    this.refuseWhileDown('wait', true);
    await this.command('wait', true, () => this.listen());
    // Register before reading the state, so an outcome published in between is not missed.
    let waiter!: (outcome: Outcome) => void;
    const settled = new Promise<Outcome>((resolve) => (waiter = resolve));
    this.waiters.set(id, [...(this.waiters.get(id) ?? []), waiter]);
    // The deadline removes the waiter, so a lost completion event or a queue with no worker
    // costs the caller `timeoutMs` and leaks nothing.
    const timer = setTimeout(
      () => this.settleOne(id, waiter, { ok: false, error: new McpCallWaitTimeoutError(id, timeoutMs) }),
      timeoutMs,
    );
    timer.unref?.();
    try {
      const current = await this.job(id);
      const state = await this.command('wait', true, () => current.getState());
      // Read the job again once it is final: a copy read while it ran has no return value yet.
      if (state === 'completed') this.settle(id, { ok: true, value: (await this.job(id)).returnvalue });
      if (state === 'failed') this.settle(id, { ok: false });
    } catch (error) {
      clearTimeout(timer);
      this.removeWaiter(id, waiter);
      throw error;
    }
    const outcome = await settled;
    clearTimeout(timer);
    if (outcome.ok) return outcome.value as Record<string, unknown>;
    if (outcome.error) throw outcome.error;
    throw this.failure(await this.job(id));
  }

  /**
   * Runs a Redis command unless the connection is known to be down, and bounds its wait.
   * `mayHaveRun` says whether a command that timed out may still take effect (ioredis re-sends
   * it on reconnect), which becomes the error's `delivered`. `bound.via` is the connection it runs
   * on when not the queue's own, `bound.ms` its bound when not `commandTimeoutMs`, and `bound.late`
   * what the error says when the bound passes.
   */
  private command<T>(
    operation: string,
    mayHaveRun: boolean,
    run: () => Promise<T>,
    bound: { via?: { status: string }; ms?: number; late?: string } = {},
  ): Promise<T> {
    try {
      this.refuseWhileDown(operation, false, bound.via);
    } catch (error) {
      return Promise.reject(error);
    }
    const ms = bound.ms ?? this.options.commandTimeoutMs;
    const late = bound.late ?? `Redis did not answer within ${ms} ms`;
    let timer: NodeJS.Timeout | undefined;
    const work = run();
    work.catch(() => undefined);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new McpQueueUnavailableError(operation, late, mayHaveRun)), ms);
      timer.unref?.();
    });
    const failed = work.catch((error: Error) =>
      Promise.reject(
        error instanceof McpCallNotFoundError || error instanceof McpQueueUnavailableError
          ? error
          : new McpQueueUnavailableError(operation, error?.message ?? String(error), mayHaveRun),
      ),
    );
    return Promise.race([failed, deadline]).finally(() => clearTimeout(timer));
  }

  /** Throws `McpQueueUnavailableError` when the queue's connection (or `via`) is down (nothing is sent). */
  private refuseWhileDown(operation: string, delivered: boolean, via?: { status: string }): void {
    for (const { status } of via ? [this.queue.client, via] : [this.queue.client])
      if (!USABLE_STATES.has(status))
        throw new McpQueueUnavailableError(operation, `the connection to Redis is ${status}`, delivered);
  }

  private failWaiters(error: Error): void {
    for (const id of [...this.waiters.keys()]) this.settle(id, { ok: false, error });
  }

  private settleOne(id: string, waiter: (outcome: Outcome) => void, outcome: Outcome): void {
    if (this.removeWaiter(id, waiter)) waiter(outcome);
  }

  private removeWaiter(id: string, waiter: (outcome: Outcome) => void): boolean {
    const waiters = this.waiters.get(id);
    const index = waiters?.indexOf(waiter) ?? -1;
    if (!waiters || index < 0) return false;
    waiters.splice(index, 1);
    if (!waiters.length) this.waiters.delete(id);
    return true;
  }

  /** One subscription to the queue's global outcome events serves every waiter of this process. */
  private listen(): Promise<unknown> {
    this.listening ??= (async () => {
      const registered = Promise.all([
        once(this.queue, 'registered:global:completed'),
        once(this.queue, 'registered:global:failed'),
      ]);
      this.queue.on('global:completed', (jobId: string, value: string) =>
        this.settle(String(jobId), { ok: true, value: JSON.parse(value) }),
      );
      this.queue.on('global:failed', (jobId: string) => this.settle(String(jobId), { ok: false }));
      // The outcome messages come on the subscriber connection (Bull's `eclient`, not in its
      // types): while it reconnects (on a Cluster, a node of its own) they are lost.
      const eclient = (this.queue as unknown as { eclient: EventEmitter }).eclient;
      let lost = false;
      eclient.on('close', () => {
        lost = true;
        this.failWaiters(
          new McpQueueUnavailableError(
            'wait',
            'the subscription to outcomes was lost; the call may still run, read getCallResult later',
            true,
          ),
        );
      });
      // A caller that came while the subscription was down waits for an outcome that may have
      // been published before it was back: once it is, every call waited for is read again.
      // 'ready' comes once ioredis has sent the SUBSCRIBE commands again, not once Redis has
      // carried them out; a PING on the same connection is answered after them. Reading only
      // then leaves no gap: an outcome published before the read is in the job, one published
      // after it reaches the subscription. Should the PING fail, the connection is gone again,
      // and the next 'ready' reads.
      eclient.on('ready', () => {
        if (!lost) return;
        lost = false;
        (eclient as EventEmitter & { ping(): Promise<unknown> })
          .ping()
          .then(() => this.readWaitedCalls())
          .catch(() => undefined);
      });
      await registered;
    })();
    return this.listening;
  }

  /**
   * Settles the waiters of each call that is over; a call whose job the queue no longer holds (a
   * failover lost the write that added it) is refused now rather than at the caller's deadline.
   * Any other answer leaves the wait to its deadline.
   */
  private async readWaitedCalls(): Promise<void> {
    for (const id of [...this.waiters.keys()]) {
      try {
        const current = await this.state(id);
        if (current.state === 'completed') this.settle(id, { ok: true, value: current.result });
        else if (current.state === 'failed') this.settle(id, { ok: false, error: current.error });
      } catch (error) {
        if (!(error instanceof McpCallNotFoundError)) continue;
        this.settle(id, {
          ok: false,
          error: new McpQueueUnavailableError(
            'wait',
            `the queue no longer holds call ${id} (a Redis failover lost it); it may have run before, read getCallResult later`,
            true,
          ),
        });
      }
    }
  }

  /** Number of callers waiting for an outcome (for tests and metrics). */
  get waiting(): number {
    let count = 0;
    for (const waiters of this.waiters.values()) count += waiters.length;
    return count;
  }

  private settle(id: string, outcome: Outcome): void {
    const waiters = this.waiters.get(id);
    if (!waiters) return;
    this.waiters.delete(id);
    waiters.forEach((resolve) => resolve(outcome));
  }

  /** @inheritdoc */
  onNotification(listener: McpCallNotificationListener): void {
    this.events.on('notification', listener);
  }

  /**
   * @inheritdoc
   * Reads Redis (bounded by `commandTimeoutMs`, refused while the connection is down): the
   * workers registered on the queue by any process (`getWorkers`), the active and waiting counts,
   * and the age of the oldest waiting job.
   */
  async stats(): Promise<McpCallQueueStats> {
    return this.command('read queue stats', false, async () => {
      const [workers, counts, oldest] = await Promise.all([
        this.queue.getWorkers(),
        this.queue.getJobCounts(),
        this.queue.getWaiting(0, 0),
      ]);
      // Ascending: the first of each waiting list is its oldest job.
      const since = oldest.filter(Boolean).map((job) => job.timestamp);
      return {
        mode: this.mode,
        workers: workers.length,
        active: counts.active,
        waiting: counts.waiting,
        oldestWaitingMs: since.length ? Math.max(0, Date.now() - Math.min(...since)) : null,
      };
    });
  }

  /**
   * Stops the worker and closes the connections. Bull's close waits for Redis (to pause the
   * worker); with Redis down that never happens, so after `commandTimeoutMs` the connections are
   * dropped instead and shutdown goes on.
   */
  async close(): Promise<void> {
    this.unobserve?.();
    this.failWaiters(new McpQueueUnavailableError('wait', 'the queue is closing', true));
    this.channels.close();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(true), this.options.commandTimeoutMs)),
    );
    const closed = this.queue.close().then(
      () => false,
      () => false,
    );
    if (await Promise.race([closed, timedOut])) {
      const clients = (this.queue as unknown as { clients?: Array<{ disconnect(): void }> }).clients ?? [];
      clients.forEach((client) => client.disconnect());
    }
    clearTimeout(timer);
    this.marks.close();
  }

  /**
   * The job of a call while its outcome is kept. Bull removes finished jobs older than
   * `keepResultsMs` only when a later job of the queue finishes, so on an idle queue the age is
   * checked here too.
   */
  private async job(id: string): Promise<Job<McpCallJobData>> {
    const job = await this.command('read job', false, () => this.queue.getJob(id));
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
    const { failure: _previous, abortable, answerable, ...call } = job.data;
    const id = String(job.id);
    const markKey = this.markKey(id);
    const ttl = Math.ceil(this.options.keepResultsMs / 1000);
    const controller = abortable ? await this.watchAbort(id) : undefined;
    const published: Promise<unknown>[] = [];
    const run = randomUUID();
    let sent = 0;
    const relay = answerable
      ? new BullCallRequestRelay(this.queue.client, this.channels, id, call.deadlineAt ?? Date.now() + call.timeoutMs)
      : undefined;
    const attempt: McpCallAttempt = {
      id,
      // A mark that cannot be written means the call is not sent: at most once wins over liveness.
      claim: async () => {
        if (await this.marks.write(markKey, ttl)) return true;
        // The caller's abort took the mark first: the call was never sent, and never will be.
        if (abortable && (await this.marks.heldByAbort(markKey))) {
          throw new McpCallAbortedError(call.server, call.method, false, abortReasonText(controller?.signal.reason));
        }
        return false;
      },
      release: () => this.marks.release(markKey),
      storedTask: async () => {
        const stored = await this.command('read the task', false, () => this.queue.client.get(this.taskKey(id)));
        return stored === null ? null : (JSON.parse(stored) as McpStoredTask);
      },
      rememberTask: async (task) =>
        void (await this.command('store the task', true, () =>
          this.queue.client.set(this.taskKey(id), JSON.stringify(task), 'EX', ttl),
        )),
      notify: (server, notification) =>
        void job.progress({ server, notification } satisfies NotificationProgress).catch(() => undefined),
      report: (event) =>
        void published.push(
          this.queue.client
            .publish(
              this.channels.eventsChannel(id),
              JSON.stringify({ ...event, r: run, n: ++sent } satisfies SentEvent),
            )
            .catch(() => undefined),
        ),
      ...(controller ? { signal: controller.signal } : {}),
      ...(relay ? { answer: relay.answer } : {}),
    };
    try {
      const picked = { queue: 'bull' as const, id, ...(job.attemptsMade === 0 ? { enqueuedAt: job.timestamp } : {}) };
      return await runQueuedAttempt(call, picked, () => this.processor.process(call, attempt));
    } catch (error) {
      // Bull's exponential backoff before the next attempt: (2^attemptsMade - 1) * delay.
      const nextDelay = (2 ** (job.attemptsMade + 1) - 1) * this.options.backoffMs;
      const final =
        !isRetryable(call.method, error) ||
        job.attemptsMade + 1 >= (job.opts.attempts ?? 1) ||
        !retryStartsInTime(call, nextDelay) ||
        controller?.signal.aborted === true;
      // With Redis gone the failure cannot be recorded; Bull marks the job failed when it can.
      await job.update({ ...call, failure: encodeCallError(error) }).catch(() => undefined);
      if (final) void job.discard();
      throw error;
    } finally {
      // The outcome is published after the call's events: the caller sees them all first.
      await Promise.all(published);
      await relay?.close();
      this.running.delete(id);
    }
  }

  /**
   * Registers the job for abort requests, then reads whether it was aborted already: an abort
   * published before the registration was recorded before it was published, so it is seen.
   */
  private async watchAbort(id: string): Promise<AbortController> {
    const controller = new AbortController();
    await this.command('subscribe', false, () => this.listenForAborts());
    this.running.set(id, controller);
    const reason = await this.command('read abort', false, () => this.queue.client.get(this.channels.abortedKey(id)));
    if (reason !== null) controller.abort(reason || undefined);
    return controller;
  }
}

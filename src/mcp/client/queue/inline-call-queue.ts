import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { McpCallNotFoundError } from '../../errors/mcp-client-call.errors';
import type { McpResolvedQueueOptions } from '../config/client-options-resolver';
import type { McpCallJob, McpCallState } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt, McpStoredTask } from '../interfaces/mcp-call-attempt.interface';
import type { McpCallProcessor } from '../mcp-call-processor';
import { refuseAborted } from '../call-observer';
import type {
  McpCallQueueStats,
  McpCallNotificationListener,
  McpCallQueue,
  McpCallWatch,
} from './mcp-call-queue.interface';
import { backoffDelay, isRetryable, retryStartsInTime } from './retry-policy';
import { runQueuedAttempt } from './queue-telemetry';
import { observeGauge } from '../../telemetry/mcp-metrics';

interface InlineCall {
  state: McpCallState;
  done: Promise<Record<string, unknown>>;
  /** When the outcome is forgotten: `keepResultsMs` after the call finished; Infinity while it runs. */
  expires: number;
}

/**
 * Runs calls in this process with the same processor and retry rules as the Bull worker, and
 * opens no Redis connection. At most `concurrency` attempts run at once, like a Bull worker's
 * jobs. Outcomes live in memory for `keepResultsMs` after the call finished: they are lost when
 * the process stops, unlike Bull's, which any process can read from Redis.
 */
export class InlineCallQueue implements McpCallQueue {
  /** @inheritdoc */
  readonly mode = 'inline' as const;
  private readonly calls = new Map<string, InlineCall>();
  private readonly events = new EventEmitter();
  private closed = new AbortController();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** When each waiting attempt started to wait, for `stats()`. */
  private readonly waitingSince = new WeakMap<() => void, number>();
  private unobserve?: () => void;

  constructor(
    private readonly options: McpResolvedQueueOptions,
    private readonly processor: McpCallProcessor,
  ) {}

  /** @inheritdoc */
  start(): void {
    this.unobserve ??= observeGauge('mcp.client.queue.depth', () => [
      { value: this.waiting.length, attributes: { 'mcp.queue.name': this.options.name, 'mcp.queue.state': 'waiting' } },
      { value: this.running, attributes: { 'mcp.queue.name': this.options.name, 'mcp.queue.state': 'active' } },
    ]);
  }

  /** @inheritdoc */
  async submit(job: McpCallJob): Promise<string> {
    this.prune();
    const id = randomUUID();
    const state: McpCallState = { id, state: 'pending' };
    const call: InlineCall = { state, done: Promise.resolve({}), expires: Infinity };
    const finish = () => (call.expires = Date.now() + this.options.keepResultsMs);
    call.done = this.run(job, id).then(
      (result) => {
        finish();
        return Object.assign(state, { state: 'completed', result }).result;
      },
      (error: Error) => {
        finish();
        Object.assign(state, { state: 'failed', error });
        throw error;
      },
    );
    call.done.catch(() => undefined);
    this.calls.set(id, call);
    return id;
  }

  /** @inheritdoc */
  execute(job: McpCallJob, watch: McpCallWatch = {}): Promise<Record<string, unknown>> {
    return this.run(job, randomUUID(), watch);
  }

  /** @inheritdoc */
  async state(id: string): Promise<McpCallState> {
    const call = this.kept(id);
    if (!call) throw new McpCallNotFoundError(id);
    return { ...call.state };
  }

  /** @inheritdoc */
  wait(id: string): Promise<Record<string, unknown>> {
    const call = this.kept(id);
    return call ? call.done : Promise.reject(new McpCallNotFoundError(id));
  }

  /** @inheritdoc */
  onNotification(listener: McpCallNotificationListener): void {
    this.events.on('notification', listener);
  }

  /** @inheritdoc */
  async stats(): Promise<McpCallQueueStats> {
    const oldest = this.waiting.length ? this.waitingSince.get(this.waiting[0]) : undefined;
    return {
      mode: this.mode,
      workers: this.closed.signal.aborted ? 0 : 1,
      active: this.running,
      waiting: this.waiting.length,
      oldestWaitingMs: oldest === undefined ? null : Date.now() - oldest,
    };
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.unobserve?.();
    this.closed.abort();
    await Promise.allSettled([...this.calls.values()].map((call) => call.done));
  }

  private async run(job: McpCallJob, id: string, watch: McpCallWatch = {}): Promise<Record<string, unknown>> {
    const { signal, onEvent, onServerRequest } = watch;
    // Kept for the retries of this call: a retry polls the task instead of calling again.
    let task: McpStoredTask | null = null;
    const attempt: McpCallAttempt = {
      id,
      claim: async () => true,
      release: async () => undefined,
      storedTask: async () => task,
      rememberTask: async (created) => void (task = created),
      notify: (server, notification) => this.events.emit('notification', server, notification),
      report: (event) => onEvent?.(event),
      ...(onServerRequest ? { answer: onServerRequest } : {}),
      ...(signal ? { signal } : {}),
    };
    const enqueuedAt = Date.now();
    for (let n = 1; ; n++) {
      try {
        const picked = { queue: 'inline' as const, id, ...(n === 1 ? { enqueuedAt } : {}) };
        return await this.slot(
          () => runQueuedAttempt(job, picked, () => this.processor.process(job, attempt)),
          () => refuseAborted(job, attempt),
          signal,
        );
      } catch (error) {
        if (
          n >= this.options.attempts ||
          !isRetryable(job.method, error) ||
          this.closed.signal.aborted ||
          signal?.aborted
        )
          throw error;
        if (!retryStartsInTime(job, backoffDelay(this.options.backoffMs, n))) throw error;
        await delay(backoffDelay(this.options.backoffMs, n), undefined, { signal: this.closed.signal }).catch(
          () => undefined,
        );
        if (this.closed.signal.aborted) throw error;
      }
    }
  }

  /**
   * Runs one attempt once fewer than `concurrency` attempts are running. `check` runs before the
   * wait and when the caller's signal aborts during it: a call aborted while queued leaves its
   * place at once (its error, from `check`, says it was never sent).
   */
  private async slot<T>(work: () => Promise<T>, check: () => void, signal?: AbortSignal): Promise<T> {
    check();
    if (this.running >= this.options.concurrency) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = this.waiting.indexOf(admit);
          if (index >= 0) this.waiting.splice(index, 1);
          try {
            check();
          } catch (error) {
            reject(error);
          }
        };
        const admit = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        this.waiting.push(admit);
        this.waitingSince.set(admit, Date.now());
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** The call of an id while its outcome is kept. */
  private kept(id: string): InlineCall | undefined {
    const call = this.calls.get(id);
    if (call && call.expires <= Date.now()) {
      this.calls.delete(id);
      return undefined;
    }
    return call;
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, call] of this.calls) if (call.expires <= now) this.calls.delete(id);
  }
}

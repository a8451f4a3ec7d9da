import type { Logger } from '@nestjs/common';
import type { ChainableCommander } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { McpQueueUnavailableError } from '../../errors/mcp-outage.errors';
import { connectedReplicasOf, isClusterClient, type McpRedisClient } from '../../redis-connection';
import type { McpRedisOutageLog } from '../../redis-outage-log';

/** The value of the at-most-once mark a caller's abort writes: the call must never be sent. */
const ABORTED_MARK = 'aborted';

/** The replies of a pipeline: per command, its error or its reply. */
type Replies = Array<[Error | null, unknown]>;

/**
 * How often a process warns that the marks it writes are not replicated (`markReplicas` unset on a
 * replicated Redis whose master has no connected replica): once a minute, whatever the queue.
 */
const UNREPLICATED_WARNING_MS = 60_000;
let unreplicatedWarnedAt: number | undefined;

/** How the call queue bounds one Redis command: refused while the connection is down, failed past its deadline. */
export type BullQueueCommand = <T>(
  operation: string,
  mayHaveRun: boolean,
  run: () => Promise<T>,
  bound?: { via?: { status: string }; ms?: number; late?: string },
) => Promise<T>;

/** What the marks of one call queue need to know of it. */
export interface BullCallMarkSettings {
  /** The queue's name, for the log lines and errors. */
  queueName: string;
  /** The bound of one Redis command, and the replicas' time to acknowledge a mark (WAIT). */
  commandTimeoutMs: number;
  /** Replicas that must acknowledge a mark: a number (strict) or `'auto'` (see `BullCallMarks`). */
  replicas: number | 'auto';
}

/**
 * The at-most-once marks of a call queue's `tools/call` jobs: before a worker sends a call it
 * writes the call's mark (Redis SET NX, valued with this process's pid and a UUID of the write),
 * and a run that finds the mark written (by an earlier run of the call, or by the caller's abort)
 * does not send it. A caller's abort that takes the mark first stops the call for good. A SET
 * that ioredis sent again on a new connection, because the reply to the first one was lost with
 * the old connection, finds the run's own value there: that mark is the run's.
 *
 * On a replicated Redis the call is sent only once replicas acknowledged the mark (Redis WAIT),
 * so a failover cannot lose it: `replicas` of them (strict), or with `'auto'` one while the master
 * lists a connected replica. WAIT blocks the connection it is sent on until the replicas answer,
 * so the marks get a connection of their own (a copy of the queue's: URL, Sentinel group or
 * Cluster, and its options), and Bull's commands (lock renewals, completions, enqueues) never
 * queue behind it.
 */
export class BullCallMarks {
  /** The connection of the marks' SET, ROLE and WAIT when `replicas` is not 0 (see `open`). */
  private connection?: McpRedisClient;

  constructor(
    /** The queue's command connection: the marks' SET when no replica has to acknowledge it. */
    private readonly client: McpRedisClient,
    private readonly settings: BullCallMarkSettings,
    private readonly command: BullQueueCommand,
    private readonly outages: McpRedisOutageLog,
    private readonly logger: Logger,
  ) {}

  /** Replicas that must acknowledge a mark before its call is sent. */
  get replicas(): number | 'auto' {
    return this.settings.replicas;
  }

  /** Opens the marks' connection now when replicas acknowledge them, so the first mark does not wait for it (a worker's start). */
  open(): void {
    if (this.settings.replicas !== 0) this.marksConnection();
  }

  /** Drops the marks' connection, if one was opened. */
  close(): void {
    this.connection?.disconnect();
  }

  /**
   * Writes a call's at-most-once mark under `key` for `ttl` seconds and resolves whether this run
   * wrote it (false: an earlier run of the call, or the caller's abort, did).
   *
   * Replicas acknowledge the mark through Redis WAIT on the marks connection. WAIT counts the
   * replicas that hold the writes of the connection it is sent on, and on a Cluster ioredis routes
   * a pipeline by the slot of its keys, so a keyless command sent in a pipeline with the mark's key
   * reaches the master of the mark's slot (alone it would go to a random node). Not MULTI: WAIT
   * does not block inside a transaction.
   * - `replicas` a number (strict): the SET and `WAIT replicas commandTimeoutMs`, one pipeline.
   * - `'auto'`: the SET and ROLE, one pipeline. When the master lists no connected replica, the
   *   call is sent with its mark unacknowledged, and a warning says so (once a minute per process).
   *   Else a second pipeline: GET of the mark and `WAIT 1 commandTimeoutMs` (the GET routes it on
   *   a Cluster, and proves the mark is on the master the WAIT asks, should the connection have
   *   been re-established in between).
   *
   * - The SET did not write, but the mark holds this write's value: ioredis sent the SET again on
   *   a new connection after the first one's reply was lost. The mark is this run's. On a
   *   replicated Redis the WAIT of that connection covers none of its writes, so a pipeline of
   *   GET, EXPIRE (a write of the mark, which its replicas receive) and WAIT follows, as in `'auto'`.
   *
   * When fewer replicas acknowledge in time, the call is not sent: the mark is deleted (a later
   * attempt may claim it) and `McpQueueUnavailableError` (not delivered) says how many
   * acknowledged. A pipeline left unanswered past its bound fails the same way, and a mark it
   * wrote is deleted when the answer comes.
   */
  async write(key: string, ttl: number): Promise<boolean> {
    const operation = 'at-most-once mark';
    const value = `${process.pid}:${randomUUID()}`;
    const { replicas: markReplicas, commandTimeoutMs: waitMs, queueName } = this.settings;
    if (markReplicas === 0) {
      const set = await this.command(operation, false, () => this.client.set(key, value, 'EX', ttl, 'NX'));
      return set === 'OK' || (await this.holds(this.client, key, value));
    }
    const marks = this.marksConnection();
    const strict = markReplicas !== 'auto';
    const needed = strict ? markReplicas : 1;
    const check =
      "the call was not sent. Check that the replicas of the queue's Redis are up and in sync " +
      `(INFO replication on its master), or ${strict ? 'lower queue.markReplicas' : 'set queue.markReplicas to 0 to send calls without waiting'}`;
    // Bounded by twice commandTimeoutMs (their own WAIT's, and the one before): WAIT blocks its
    // connection, so the marks of this process are answered one after the other, and while
    // replicas do not answer, later ones time out here.
    const bound = (what: string) => ({
      via: marks,
      ms: 2 * waitMs,
      late: `${what} not answered within ${2 * waitMs} ms (the marks of one process wait one after the other); ${check}`,
    });
    const waited = bound(`the mark and its WAIT for ${needed} replica(s) were`);
    const first = (pipeline: ChainableCommander) =>
      strict
        ? pipeline.set(key, value, 'EX', ttl, 'NX').wait(needed, waitMs)
        : pipeline.set(key, value, 'EX', ttl, 'NX').role();
    const firstBound = strict ? waited : bound('the mark was');
    const wroteIt = (replies: Replies) => replies[0]?.[1] === 'OK';
    let answer = await this.pipeline(marks, key, first, firstBound, wroteIt);
    // On a Cluster whose slot moved (a failover), ioredis follows MOVED for a pipeline only when
    // every command of it was redirected; the keyless WAIT or ROLE never is, so the SET comes back
    // with MOVED unwritten and the slot table stays stale. Reload it and send once more.
    if (isClusterClient(marks) && /^MOVED /.test(answer[0]?.[0]?.message ?? '')) {
      await this.command(operation, false, () => new Promise<void>((done) => marks.refreshSlotsCache(() => done())), {
        via: marks,
      });
      answer = await this.pipeline(marks, key, first, firstBound, wroteIt);
    }
    const [[setError, set] = [null, null], [secondError, second] = [null, 0]] = answer;
    if (setError) throw new McpQueueUnavailableError(operation, setError.message, false);
    // Not written: an earlier run's mark or the caller's abort, unless it is this run's own SET sent again.
    const resent = set !== 'OK' && (await this.holds(marks, key, value));
    if (set !== 'OK' && !resent) return false;
    let [waitError, acknowledged] = [secondError, second];
    // Auto: how many replicas the master lists (undefined when ROLE failed: wait for one).
    const replicas = strict || secondError ? undefined : connectedReplicasOf(second);
    if (!strict && replicas === 0) {
      this.warnUnreplicated();
      return true;
    }
    if (!strict || resent) {
      const confirmed = await this.pipeline(
        marks,
        key,
        (pipeline) =>
          resent ? pipeline.get(key).expire(key, ttl).wait(needed, waitMs) : pipeline.get(key).wait(needed, waitMs),
        waited,
        (replies) => replies[0]?.[1] === value,
      );
      const [[getError, held] = [null, null]] = confirmed;
      const waitReply = confirmed[confirmed.length - 1] ?? [null, 0];
      // Not on the master the WAIT asked (a failover between the two pipelines): nothing of ours to delete.
      if (getError || held !== value)
        throw new McpQueueUnavailableError(
          operation,
          `the mark was not on the master its WAIT went to (${getError?.message ?? 'a failover between them?'}); the call was not sent`,
          false,
        );
      [waitError, acknowledged] = waitReply;
    }
    if (!waitError && Number(acknowledged) >= needed) return true;
    const asked = strict
      ? 'queue.markReplicas asks for'
      : replicas === undefined
        ? `waited for (ROLE did not say how many the master has: ${secondError?.message ?? String(second)})`
        : `waited for (the master lists ${replicas} connected)`;
    const shortfall = waitError
      ? `WAIT for ${needed} replica(s) failed (${waitError.message})`
      : `only ${Number(acknowledged)} of the ${needed} replica(s) ${asked} acknowledged the mark within ${waitMs} ms`;
    await this.command('delete the unacknowledged at-most-once mark', false, () => marks.del(key), {
      via: marks,
    }).catch((error: Error) => this.logger.warn(`Queue "${queueName}": ${error.message}`));
    const reason = `${shortfall}; ${check}`;
    this.outages.report(`Queue "${queueName}": ${reason}`);
    throw new McpQueueUnavailableError(operation, reason, false);
  }

  /**
   * Takes the mark of a call not sent yet for the caller's abort (SET NX on the queue's
   * connection): true when it did, and no run will send the call. A command that failed may still
   * have taken it (`McpQueueUnavailableError` with `delivered: true`).
   */
  async takeForAbort(key: string, ttl: number): Promise<boolean> {
    return (await this.command('abort', true, () => this.client.set(key, ABORTED_MARK, 'EX', ttl, 'NX'))) === 'OK';
  }

  /** Whether the mark under `key` is the caller's abort's (see `takeForAbort`). */
  async heldByAbort(key: string): Promise<boolean> {
    return this.holds(this.client, key, ABORTED_MARK);
  }

  /** Whether the mark under `key` holds `value` (read on `connection`). */
  private async holds(connection: McpRedisClient, key: string, value: string): Promise<boolean> {
    const via = connection === this.client ? {} : { via: connection };
    return (await this.command('at-most-once mark', false, () => connection.get(key), via)) === value;
  }

  /** Deletes the mark under `key`, so a later attempt of the call may claim it. */
  async release(key: string): Promise<void> {
    await this.command('release the at-most-once mark', false, () => this.client.del(key));
  }

  /** The marks' connection, opened on first use. */
  private marksConnection(): McpRedisClient {
    if (!this.connection) {
      this.connection = this.client.duplicate();
      this.outages.watch(this.connection, `Queue "${this.settings.queueName}" (at-most-once marks)`);
    }
    return this.connection;
  }

  /**
   * Sends `build`'s pipeline on the marks connection within `bound` (see `BullQueueCommand`). When
   * the bound passes first the call is not sent, so once the late replies come, the mark is
   * deleted if they say (`wroteIt`) that it is this run's.
   */
  private async pipeline(
    marks: McpRedisClient,
    key: string,
    build: (pipeline: ChainableCommander) => ChainableCommander,
    bound: { via: McpRedisClient; ms: number; late: string },
    wroteIt: (replies: Replies) => boolean,
  ): Promise<Replies> {
    let replies: Promise<Replies | null> | undefined;
    const sent = () => (replies = build(marks.pipeline()).exec());
    try {
      return (await this.command('at-most-once mark', false, sent, bound)) ?? [];
    } catch (error) {
      void replies?.then((late) => (late && wroteIt(late) ? marks.del(key) : undefined)).catch(() => undefined);
      throw error;
    }
  }

  /** Warns, at most once a minute in this process, that marks are sent unacknowledged (auto, no replica). */
  private warnUnreplicated(): void {
    const now = Date.now();
    if (unreplicatedWarnedAt !== undefined && now - unreplicatedWarnedAt < UNREPLICATED_WARNING_MS) return;
    unreplicatedWarnedAt = now;
    this.logger.warn(
      `Queue "${this.settings.queueName}": the master of the queue's Redis lists no connected replica, so the ` +
        'at-most-once marks of tools/call are not replicated: should it fail now, a call could be sent a ' +
        'second time. Calls are sent meanwhile (queue.markReplicas is unset); set queue.markReplicas to 1 to ' +
        'refuse them instead. Logged at most once a minute.',
    );
  }
}

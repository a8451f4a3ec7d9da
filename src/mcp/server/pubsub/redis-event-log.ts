import type { Cluster, Redis } from 'ioredis';
import { hashTagged } from '../../redis-connection';
import type { McpEventLog, McpEventLogBounds, McpLoggedEvent } from './mcp-event-log.interface';

/**
 * Appends one event: numbers it with INCR when the caller did not (ARGV[1] empty), adds it to
 * the stream with the id `<seq>-1`, trims to MAXLEN and renews both keys' TTL; returns the seq.
 */
const APPEND_SCRIPT = `local seq = ARGV[1]
if seq == '' then seq = redis.call('INCR', KEYS[2]) else seq = tonumber(seq) end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], seq .. '-1', 'd', ARGV[2], 'f', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
if ARGV[1] == '' then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
return seq`;

/**
 * The event log in Redis streams, shared by every replica: `<prefix>:<mount>:events:<session>:<stream>`
 * (XADD with MAXLEN, PEXPIRE after every event) and a `:seq` counter for the streams the log
 * numbers. A client resumes on any replica. On a Cluster the stream's name is hash-tagged
 * (`{<prefix>:<mount>:events:<session>:<stream>}`): the append script and `forget` touch both
 * keys, which must share a slot, while the streams of different sessions spread over the nodes.
 */
export class McpRedisEventLog implements McpEventLog {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly keyPrefix: string,
    private readonly bounds: McpEventLogBounds,
    private readonly cluster = false,
  ) {}

  /** @inheritdoc */
  async append(
    sessionId: string,
    streamId: string,
    data: string,
    options: { seq?: number; final?: boolean } = {},
  ): Promise<number> {
    const key = this.key(sessionId, streamId);
    const seq = await this.redis.eval(
      APPEND_SCRIPT,
      2,
      key,
      `${key}:seq`,
      options.seq === undefined ? '' : String(options.seq),
      data,
      options.final ? '1' : '0',
      String(this.bounds.maxEvents),
      String(this.bounds.ttlMs),
    );
    return Number(seq);
  }

  /** @inheritdoc */
  async after(sessionId: string, streamId: string, after: number): Promise<McpLoggedEvent[]> {
    const entries = await this.redis.xrange(this.key(sessionId, streamId), `(${after}-1`, '+');
    return entries.map(([id, fields]) => {
      const values = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) values.set(fields[i], fields[i + 1]);
      return { seq: Number(id.split('-', 1)[0]), data: values.get('d') ?? '', final: values.get('f') === '1' };
    });
  }

  /** @inheritdoc */
  async lastSeq(sessionId: string, streamId: string): Promise<number> {
    return Number((await this.redis.get(`${this.key(sessionId, streamId)}:seq`)) ?? 0);
  }

  /** @inheritdoc */
  async forget(sessionId: string, streamId: string): Promise<void> {
    const key = this.key(sessionId, streamId);
    await this.redis.del(key, `${key}:seq`);
  }

  private key(sessionId: string, streamId: string): string {
    const key = `${this.keyPrefix}:events:${sessionId}:${streamId}`;
    return this.cluster ? hashTagged(key) : key;
  }
}

import { randomBytes } from 'node:crypto';
import { createServer, createConnection, type Server, type Socket } from 'node:net';
import type { McpClientService } from '../../src/mcp';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import { FailoverCountingTools, startFailoverApps } from '../support/failover-load';
import type { RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_ADDRESS, deleteRedisKeys } from '../support/redis';

jest.setTimeout(60_000);

/**
 * A TCP proxy in front of the test Redis. Once `dropReplyTo(marker)` is armed, the first command
 * a client sends whose bytes hold `marker` reaches Redis, and the connection it came on is cut
 * before Redis's reply gets back: the command ran, the client never heard so. Connections opened
 * after the cut are held until Redis has answered the cut one, so nothing overtakes it.
 */
class ReplyDroppingProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private marker?: string;
  private cut?: Promise<void>;
  /** How many commands were cut off from their reply. */
  dropped = 0;

  constructor() {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    return `redis://127.0.0.1:${port}`;
  }

  /** Arms the next cut: the first command holding `marker` runs on Redis and its reply is lost. */
  dropReplyTo(marker: string): void {
    this.marker = marker;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    return socket;
  }

  private accept(client: Socket): void {
    this.track(client);
    client.pause();
    void (this.cut ?? Promise.resolve()).then(() => {
      const upstream = this.track(createConnection(TEST_REDIS_ADDRESS));
      upstream.on('data', (chunk) => client.write(chunk));
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.on('data', (chunk) => {
        if (this.marker && chunk.includes(this.marker)) {
          this.marker = undefined;
          this.dropped++;
          upstream.removeAllListeners('data');
          upstream.removeAllListeners('close');
          client.removeAllListeners('close');
          // Redis answers on this connection only: once its reply is in, the command has run.
          this.cut = new Promise((resolve) => upstream.once('data', () => resolve()));
          void this.cut.then(() => upstream.destroy());
          upstream.write(chunk);
          client.destroy();
          return;
        }
        upstream.write(chunk);
      });
      client.resume();
    });
  }
}

/**
 * The enqueue of a queued `tools/call` reaches Redis and runs there, but its reply is lost with the
 * connection (a master killed right after it answered, a dropped link). ioredis re-sends the
 * command on the new connection, as it does every command left unanswered. The call must still
 * run once: the caller gets one answer, the tool one run, the queue one job.
 */
describe('a queued call whose Redis command ran but whose reply was lost', () => {
  let proxy: ReplyDroppingProxy;
  let db: TestDatabase;
  let target: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  const queueName = `reply-lost-${randomBytes(4).toString('hex')}`;
  const prefix = `reply-lost-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    proxy = new ReplyDroppingProxy();
    const [url, database] = await Promise.all([proxy.listen(), createTestDatabase()]);
    db = database;
    ({ target, caller, client } = await startFailoverApps(db.url, url, { name: queueName, prefix }));
  });

  afterAll(async () => {
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    await proxy?.close();
    await db?.drop();
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('runs the tool once and queues one job, although the enqueue was sent twice', async () => {
    // A call first, so that the enqueue script is loaded on Redis and the marked one is not refused as unknown.
    await expect(client.callTool('remote', 'count', { tag: 'warm-up' })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'warm-up' }],
    });
    const tag = `lost-reply-${randomBytes(6).toString('hex')}`;
    proxy.dropReplyTo(tag);

    const result = await client.callTool('remote', 'count', { tag });

    expect(proxy.dropped).toBe(1);
    expect(result.content).toEqual([{ type: 'text', text: tag }]);
    const bull = (caller.app.get(McpCallQueueHost).queue as BullCallQueue).bull;
    // Whatever was queued has run: no job is left to run the call a second time later.
    await pollUntil('the queue to be idle', async () => {
      const counts = await bull.getJobCounts();
      return counts.waiting + counts.active + counts.delayed === 0 ? true : undefined;
    });
    const jobs = await bull.getJobs(['completed', 'failed']);
    const ofTag = jobs.filter((job) => (job.data.params?.arguments as { tag?: string } | undefined)?.tag === tag);
    expect(ofTag).toHaveLength(1);
    expect(FailoverCountingTools.runs.get(tag)).toBe(1);
  });

  it("sends the call once when the reply to its at-most-once mark was lost: the mark sent again is known as the run's own", async () => {
    const tag = `lost-mark-reply-${randomBytes(6).toString('hex')}`;
    proxy.dropReplyTo(':mcp-attempted:');

    // Enqueued, then read back: a caller waiting in this process hears the cut connection as an
    // outage ("the call may still run"), which is not what this case is about.
    const id = await client.callTool('remote', 'count', { tag }, { wait: false });
    const outcome = await pollUntil('the call to end', async () => {
      const read = await client.getCallResult(id);
      return read.state === 'pending' ? undefined : read;
    });

    expect(proxy.dropped).toBe(2);
    expect(outcome).toMatchObject({ state: 'completed', result: { content: [{ type: 'text', text: tag }] } });
    expect(FailoverCountingTools.runs.get(tag)).toBe(1);
  });
});

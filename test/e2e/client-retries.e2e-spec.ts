import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { freeLoopbackPort as freePort } from '../support/child-process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Job } from 'bull';
import { McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { McpTransportError } from '../../src/mcp/errors';
import { createInMemoryMcpStores } from '../../src/mcp/testing';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import {
  answerHandshake,
  result,
  status,
  startScriptedHttpServer,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';
import { rawServer } from '../fixtures/stdio/stdio-test-kit';
import { deleteRedisKeys, listRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

/**
 * Queue retries run for real: Bull on Redis with `attempts: 3, backoffMs: 10`, against peers that
 * fail on purpose. Every HTTP server entry sets the transport's own `retry: { retries: 0 }`, so
 * each POST counted below is one queue attempt and nothing else.
 */

/**
 * Answers a 2025-11-25 session handshake (and `ping`) itself and takes the other POSTs from per-method
 * scripts; a request with no scripted reply left gets 500 "unscripted <method>".
 */
function scriptByMethod(server: ScriptedHttpServer, script: Record<string, ScriptedReply[]>): void {
  const dispatch: ScriptedReply = (res, body, req) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (answerHandshake(res, body, 'scripted-session', '1.0.0')) return;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the scripted peer answers whatever method name the client sent
    const method = String(body?.method ?? '');
    if (method === 'ping') return result({})(res, body, req);
    const next = script[method]?.shift();
    if (!next) return void res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`unscripted ${method}`);
    return next(res, body, req);
  };
  server.reply(...Array.from({ length: 100 }, () => dispatch));
}

/** POSTs of `method` the server received. */
function posts(server: ScriptedHttpServer, method: string): number {
  return server.received.filter((r) => r.httpMethod === 'POST' && r.body?.method === method).length;
}

/** Lines of a file a fixture appends to (none when it was never created). */
function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('queue retries on Bull (real Redis) against failing peers', () => {
  const prefix = `mcp-retries-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'mcp-retries-'));
  const spawnsFile = join(dir, 'spawns.log');
  const exitSpawnsFile = join(dir, 'exit-spawns.log');
  const recordFile = join(dir, 'record.log');
  const scripted: ScriptedHttpServer[] = [];
  const apps: INestApplication[] = [];

  /** Boots a client-only app with its own Bull queue (unique name) on the test Redis. */
  async function clientApp(
    servers: McpClientOptions['servers'],
  ): Promise<{ client: McpClientService; bull: BullCallQueue['bull']; mark: (id: string) => string }> {
    const name = `calls-${randomBytes(4).toString('hex')}`;
    const moduleRef = await Test.createTestingModule({
      imports: [
        McpClientModule.forRoot({
          servers,
          redis: TEST_REDIS_URL,
          queue: { name, prefix, attempts: 3, backoffMs: 10 },
          stores: createInMemoryMcpStores(),
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: ['error'] });
    apps.push(app);
    await app.init();
    const bull = (app.get(McpCallQueueHost, { strict: false }).queue as BullCallQueue).bull;
    return { client: app.get(McpClientService), bull, mark: (id) => `${prefix}:${name}:mcp-attempted:${id}` };
  }

  /** The Bull job of a call, to read how many attempts it made. */
  async function job(bull: BullCallQueue['bull'], id: string): Promise<Job> {
    const found = await bull.getJob(id);
    if (!found) throw new Error(`job ${id} is gone`);
    return found;
  }

  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    for (const server of scripted) await server.close().catch(() => undefined);
    await deleteRedisKeys(`${prefix}:*`);
    rmSync(dir, { recursive: true, force: true });
  });

  afterAll(async () => {
    // Checked after the cleanup above: the suite leaves no key behind, at-most-once marks included.
    expect(await listRedisKeys(`${prefix}:*`)).toEqual([]);
  });

  describe('over HTTP', () => {
    it('a 500 on tools/call is not retried: exactly one POST, and the caller is told it was delivered', async () => {
      const server = await startScriptedHttpServer();
      scripted.push(server);
      scriptByMethod(server, {
        'tools/call': [status(500, 'exploded'), result({ content: [{ type: 'text', text: 'second run' }] })],
      });
      const { client, bull, mark } = await clientApp({
        http: { url: server.url, version: '2025-11-25', retry: { retries: 0 } },
      });

      const id = await client.enqueueToolCall('http', 'work', {});
      const error = await client.waitForCall(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: true, status: 500 });
      await new Promise(setImmediate);
      expect(posts(server, 'tools/call')).toBe(1);
      expect((await job(bull, id)).attemptsMade).toBe(1);
      // The at-most-once mark of the attempt that may have reached the server stays.
      expect(await listRedisKeys(mark(id))).toHaveLength(1);
    });

    it('a 503 and then a 200 on tools/list: exactly two POSTs and the list', async () => {
      const server = await startScriptedHttpServer();
      scripted.push(server);
      scriptByMethod(server, {
        'tools/list': [
          status(503, 'busy'),
          result({ tools: [{ name: 'work', inputSchema: { type: 'object' } }] }),
          status(500, 'a third POST'),
        ],
      });
      const { client } = await clientApp({ http: { url: server.url, version: '2025-11-25', retry: { retries: 0 } } });

      const tools = await client.listTools('http');
      expect(tools).toEqual([expect.objectContaining({ name: 'work', inputSchema: { type: 'object' } })]);
      expect(posts(server, 'tools/list')).toBe(2);
    });

    it('a refused connection on tools/call is retried, and the tool runs exactly once', async () => {
      const port = await freePort();
      const first = await startScriptedHttpServer(port);
      scripted.push(first);
      scriptByMethod(first, { 'tools/list': [result({ tools: [{ name: 'work', inputSchema: { type: 'object' } }] })] });
      const { client, bull } = await clientApp({
        http: { url: first.url, version: '2025-11-25', retry: { retries: 0 } },
      });
      // Open the remote session, then take the server away: the tools/call POST itself is refused.
      await client.listTools('http');
      await first.close();

      // The second server binds the port as soon as the first attempt has failed, before Bull
      // promotes the retry (a 10 ms backoff and several Redis round trips later).
      let second: Promise<ScriptedHttpServer> | undefined;
      const firstFailure = new Promise<Error>((resolve) =>
        bull.once('failed', (_job: Job, error: Error) => {
          second = startScriptedHttpServer(port);
          resolve(error);
        }),
      );
      const id = await client.enqueueToolCall('http', 'work', { run: 'once' });
      const error = await firstFailure;
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: false });
      const server = await second!;
      scripted.push(server);
      scriptByMethod(server, {
        'tools/call': [result({ content: [{ type: 'text', text: 'ran' }] }), status(500, 'a second run')],
      });

      expect(await client.waitForCall(id)).toEqual({ content: [{ type: 'text', text: 'ran' }] });
      await new Promise(setImmediate);
      expect(posts(first, 'tools/call')).toBe(0);
      expect(posts(server, 'tools/call')).toBe(1);
      expect(server.received.find((r) => r.body?.method === 'tools/call')?.body).toMatchObject({
        params: { name: 'work', arguments: { run: 'once' } },
      });
      // Bull counts failed attempts: the refused one.
      expect((await job(bull, id)).attemptsMade).toBe(1);
    });
  });

  describe('over stdio', () => {
    it('a command that does not exist is retried up to attempts and reported not delivered', async () => {
      const { client, bull } = await clientApp({ missing: { command: [join(dir, 'no-such-program')] } });
      const id = await client.enqueueToolCall('missing', 'work', {});
      const error = await client.waitForCall(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: false });
      expect((error as Error).message).toContain('ENOENT');
      expect((await job(bull, id)).attemptsMade).toBe(3);
    });

    it('a program that exits before reading its stdin is spawned once per attempt and reported not delivered', async () => {
      const { client, bull } = await clientApp({
        exits: { command: rawServer('early-exit'), env: { STDIO_FIXTURE_SPAWNS: exitSpawnsFile } },
      });
      const id = await client.enqueueToolCall('exits', 'work', {});
      const error = await client.waitForCall(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: false });
      expect((await job(bull, id)).attemptsMade).toBe(3);
      expect(lines(exitSpawnsFile)).toHaveLength(3);
    });

    it('a crash after the request was written is not retried: one spawn for the tools/call, delivered', async () => {
      const { client, bull, mark } = await clientApp({
        crashes: {
          command: rawServer('normal'),
          version: '2025-11-25',
          env: { STDIO_FIXTURE_SPAWNS: spawnsFile, STDIO_FIXTURE_RECORD: recordFile },
        },
      });
      const id = await client.enqueueToolCall('crashes', 'crash', {});
      const error = await client.waitForCall(id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: true });
      expect((await job(bull, id)).attemptsMade).toBe(1);
      // One spawn: the call's own handshake learns the server's capabilities. A retry would have
      // spawned a second process and written a second tools/call.
      const requests = lines(recordFile)
        .map((line) => JSON.parse(line) as { id?: unknown; method?: string })
        .filter((message) => message.id !== undefined && message.method !== 'initialize')
        .map((message) => message.method);
      expect(requests).toEqual(['tools/call']);
      expect(lines(spawnsFile)).toHaveLength(1);
      // The at-most-once mark of the delivered attempt stays.
      expect(await listRedisKeys(mark(id))).toHaveLength(1);
    });
  });
});

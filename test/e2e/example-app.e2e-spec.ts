import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';

describe('the example app on its embedded SQLite default', () => {
  const originalCwd = process.cwd();
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-example-'));
  let app: INestApplication;
  let url: URL;

  beforeAll(async () => {
    process.chdir(workdir);
    process.env.MCP_TOKENS = 'alice=token-a,bob=token-b';
    delete process.env.DATABASE_URL;
    delete process.env.REDIS_URL;
    // The example app reads its environment when it is first imported (each Jest file has its own module registry).
    const { AppModule } = require('../../src/app.module');
    app = await NestFactory.create(AppModule as never, { logger: ['error'], abortOnError: false });
    await app.listen(0, '127.0.0.1');
    url = new URL(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`);
  });

  afterAll(async () => {
    await app?.close();
    process.chdir(originalCwd);
    delete process.env.MCP_TOKENS;
    rmSync(workdir, { recursive: true, force: true });
  });

  it('serves echo, add, fail and whoami to a token from MCP_TOKENS and logs them in ./data', async () => {
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer token-b' } } });
    const client = new Client({ name: 'example-e2e', version: '1.0.0' });
    await client.connect(transport);

    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add', 'echo', 'fail', 'relay_echo', 'whoami']);
    // relay_echo calls echo through McpClientService: an inline job here, since REDIS_URL is unset.
    expect((await client.callTool({ name: 'relay_echo', arguments: { text: 'round trip' } })).content).toEqual([
      { type: 'text', text: 'bob via relay: round trip' },
    ]);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([{ type: 'text', text: 'hi' }]);
    expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({ sum: 5 });
    const failed = await client.callTool({ name: 'fail', arguments: { reason: 'nope' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({ principal: 'bob' });
    await client.close();

    const db = new DataSource({ type: 'better-sqlite3', database: join(workdir, 'data', 'durable-mcp.sqlite') });
    await db.initialize();
    try {
      const [session] = await db.query(`SELECT principal_key FROM mcp_inbound_sessions`);
      expect(session.principal_key).toBe('bob');
      const events: { method: string; is_error: number }[] = await db.query(`SELECT method, is_error FROM mcp_events WHERE kind = 'request' ORDER BY created_at`);
      expect(events.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
      expect(events.filter((e) => e.is_error === 1)).toHaveLength(1);
      const outbound: { server: string; method: string }[] = await db.query(`SELECT server, method FROM mcp_events WHERE direction = 'outbound'`);
      expect(outbound).toContainEqual({ server: 'self', method: 'tools/call' });
      const [remote] = await db.query(`SELECT server, scope_key FROM mcp_outbound_sessions`);
      expect(remote).toMatchObject({ server: 'self' });
    } finally {
      await db.destroy();
    }
  });

  it('refuses a token that is not in MCP_TOKENS', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: 'Bearer nope', 'Content-Type': 'application/json', Accept: 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });
});

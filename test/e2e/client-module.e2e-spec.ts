import { BullModule } from '@nestjs/bull';
import { Injectable, Module } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { MCP_ENTITIES, McpClientModule, McpClientService, McpModule, type McpClientOptions } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { type McpTransportFactory, mcpTransports } from '../../src/mcp/transports';
import { McpEvent } from '../../src/mcp/stores';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import { InMemorySdkTransportFactory } from '../fixtures/client/in-memory-sdk.transport';
import { FixtureTools, OtherMountTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import { MCP_TRANSPORT_FACTORIES } from '../../src/mcp/transports';

function queueHosts(app: RunningApp): McpCallQueueHost[] {
  return app.app
    .get(DiscoveryService)
    .getProviders()
    .map((wrapper) => wrapper.instance)
    .filter((instance): instance is McpCallQueueHost => instance instanceof McpCallQueueHost);
}

describe('McpClientModule', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  describe('beside two mounts and a host BullModule.forRoot configuration', () => {
    const prefix = `mcp-e2e-${randomBytes(4).toString('hex')}`;
    const queueName = `mcp-calls-${randomBytes(4).toString('hex')}`;
    let app: RunningApp;

    beforeAll(async () => {
      app = await startApp(db.url, {
        imports: [
          BullModule.forRoot({ redis: TEST_REDIS_URL, prefix }),
          McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
          McpModule.forRoot({ auth: fixtureAuth, mount: 'second', path: '/second', providers: [OtherMountTools] }),
          McpClientModule.forRoot({
            servers: { local: { transport: 'toolset', mount: 'second', principal: 'carol' } },
            queue: { name: queueName },
          }),
        ],
        providers: [FixtureTools, OtherMountTools],
      });
    });

    afterAll(async () => {
      await app?.close().catch(() => undefined);
      // Every key of this suite's prefix: jobs, events and the at-most-once marks.
      await deleteRedisKeys(`${prefix}:*`);
    });

    it('runs one queue with one worker in the app, on the shared Bull configuration', async () => {
      const hosts = queueHosts(app);
      expect(hosts).toHaveLength(1);
      expect(app.app.get(McpClientService).mode).toBe('bull');
      const bull = (hosts[0].queue as BullCallQueue).bull;
      expect((bull as unknown as { keyPrefix: string }).keyPrefix).toBe(prefix);
      // The worker registers once its blocking connection is up: wait for it, then count.
      const deadline = Date.now() + 10_000;
      while ((await bull.getWorkers()).length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await bull.getWorkers()).toHaveLength(1);
    });

    it('every call lands on the one client that knows the server', async () => {
      const client = app.app.get(McpClientService);
      const results = await Promise.all(Array.from({ length: 24 }, () => client.callTool('local', 'other_only', {})));
      expect(results).toHaveLength(24);
      for (const result of results) expect(result).toMatchObject({ content: [{ type: 'text', text: 'other' }] });
      const rows = await db.dataSource
        .getRepository(McpEvent)
        .count({ where: { direction: 'outbound', server: 'local', method: 'tools/call' } });
      expect(rows).toBe(24);
    });
  });

  describe('forRootAsync', () => {
    @Injectable()
    class ClientSettings {
      readonly servers: McpClientOptions['servers'] = { local: { transport: 'toolset', principal: 'dave' } };
    }

    @Module({ providers: [ClientSettings], exports: [ClientSettings] })
    class SettingsModule {}

    /** Lives in a module that does not import McpClientModule: only a global client reaches it. */
    @Injectable()
    class Caller {
      constructor(readonly client: McpClientService) {}
    }

    @Module({ providers: [Caller] })
    class CallerModule {}

    it('takes its options from a factory with injected providers, and with isGlobal its client is global', async () => {
      const app = await startApp(db.url, {
        imports: [
          McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
          McpClientModule.forRootAsync({
            isGlobal: true,
            imports: [SettingsModule],
            inject: [ClientSettings],
            useFactory: (settings: ClientSettings) => ({ servers: settings.servers, defaultTimeoutMs: 5_000 }),
          }),
          CallerModule,
        ],
        providers: [FixtureTools],
      });
      try {
        const client = app.app.get(Caller, { strict: false }).client;
        expect(client).toBe(app.app.get(McpClientService));
        expect(client.mode).toBe('inline');
        expect(client.servers()).toEqual(['local']);
        expect(await client.callTool('local', 'whoami', {})).toMatchObject({
          structuredContent: { principal: 'dave' },
        });
      } finally {
        await app.close();
      }
    });
  });

  describe('with a transport of the app', () => {
    let app: RunningApp;

    beforeAll(async () => {
      app = await startApp(db.url, {
        imports: [
          McpClientModule.forRoot({
            transports: mcpTransports(InMemorySdkTransportFactory),
            servers: { memory: { transport: 'in-memory-sdk', serverName: 'sdk-in-memory' } },
          }),
        ],
      });
    });

    afterAll(async () => {
      await app?.close();
    });

    it('registers the factory beside the built-in ones', () => {
      const factories = app.app.get<ReadonlyMap<string, McpTransportFactory<object>>>(MCP_TRANSPORT_FACTORIES);
      expect([...factories.keys()].sort()).toEqual(['http', 'in-memory-sdk', 'stdio', 'toolset']);
    });

    it('lists and calls the tools of a server reached through it, with handshake, capability checks and event rows', async () => {
      const client = app.app.get(McpClientService);
      const factory = app.app.get(InMemorySdkTransportFactory, { strict: false });
      expect((await client.listTools('memory')).map((tool) => tool.name)).toEqual(['shout']);
      expect(await client.callTool('memory', 'shout', { text: 'quiet' })).toMatchObject({
        content: [{ type: 'text', text: 'QUIET' }],
      });
      expect(factory.runs).toEqual(['shout']);
      expect(factory.built.map((entry) => entry.server)).toEqual(['memory']);
      const calls = await db.dataSource
        .getRepository(McpEvent)
        .find({ where: { direction: 'outbound', server: 'memory', method: 'tools/call' } });
      expect(calls).toHaveLength(1);
      expect(calls[0].response).toMatchObject({ result: { content: [{ type: 'text', text: 'QUIET' }] } });
    });

    it('refuses at boot an entry its factory rejects, naming the server', async () => {
      const boot = Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: MCP_ENTITIES,
            synchronize: true,
          }),
          McpClientModule.forRoot({
            transports: mcpTransports(InMemorySdkTransportFactory),
            servers: { broken: { transport: 'in-memory-sdk' } },
          }),
        ],
      }).compile();
      await expect(boot).rejects.toThrow(McpConfigurationError);
      await expect(boot).rejects.toThrow('MCP server "broken": "serverName" must be a non-empty string');
    });

    it('refuses at boot a transport nobody registered, listing the known ones', async () => {
      const boot = Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: MCP_ENTITIES,
            synchronize: true,
          }),
          McpClientModule.forRoot({ servers: { ws: { transport: 'websocket', url: 'ws://127.0.0.1:1' } } }),
        ],
      }).compile();
      await expect(boot).rejects.toThrow(
        `MCP server "ws": unknown transport "websocket" (known: 'stdio', 'http', 'toolset'`,
      );
    });

    it('refuses a factory that claims a built-in transport name', async () => {
      const boot = Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: MCP_ENTITIES,
            synchronize: true,
          }),
          McpClientModule.forRoot({
            transports: mcpTransports({
              transport: 'http',
              create: () => ({ deliver: () => Promise.reject(new Error('unused')) }),
            }),
          }),
        ],
      }).compile();
      await expect(boot).rejects.toThrow('Two transport factories serve transport "http"');
    });
  });
});

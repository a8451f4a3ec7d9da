import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { MCP_ENTITIES, McpModule, McpTool, type McpAuthResult } from '../../src/mcp';
import { routingHeaders, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { TaskGates } from '../fixtures/tasks/task-tools';
import { createHttpApp } from '../support/http-app';
import { MCP_ACCEPT } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import type { INestApplication } from '@nestjs/common';

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const auth = (token: string): McpAuthResult | null =>
  token === 'token-alice'
    ? { key: 'alice', label: 'Alice' }
    : token === 'token-bob'
      ? { key: 'bob', label: 'Bob' }
      : null;

/** The statements the app's connection sends, as TypeORM logs them. */
class StatementLog implements TypeOrmLogger {
  readonly statements: string[] = [];
  logQuery(query: string): void {
    this.statements.push(query);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

@Injectable()
class ListenTools {
  @McpTool({
    description: 'Waits on a gate',
    input: { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] },
    task: 'optional',
  })
  async wait({ gate }: { gate: string }): Promise<string> {
    await TaskGates.gate(gate);
    return gate;
  }
}

/**
 * `subscriptions/listen` with `taskIds` (2026-07-28) on PostgreSQL: the caller's own tasks among
 * the ids are found with one statement, however many ids the body names.
 */
describe('listen task ids (PostgreSQL)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let url: string;
  const log = new StatementLog();
  const readers: SseReader[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: db.url,
          entities: MCP_ENTITIES,
          logging: ['query'],
          logger: log,
        }),
        McpModule.forRoot({ auth, tasks: { pollIntervalMs: 50 } }),
      ],
      providers: [ListenTools],
    }).compile();
    app = createHttpApp(moduleRef, 'express', { logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`;
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    await app?.close();
    await db?.drop();
  });

  const create = async (token: string, gate: string): Promise<string> => {
    const reply = await statelessPost(
      url,
      statelessRequest(gate, 'tools/call', { name: 'wait', arguments: { gate } }, WITH_TASKS),
      { token },
    );
    expect(reply.json.result).toMatchObject({ resultType: 'task' });
    return reply.json.result.taskId;
  };

  it('agrees to the caller’s own ids among 200, in the order given, with one read of mcp_tasks', async () => {
    const mine = [await create('token-alice', 'ids-1'), await create('token-alice', 'ids-2')];
    const theirs = await create('token-bob', 'ids-bob');
    const ids = Array.from({ length: 197 }, (_, i) => `unknown-${i}`);
    ids.splice(10, 0, mine[1]);
    ids.splice(50, 0, theirs);
    ids.splice(150, 0, mine[0]);
    const body = statelessRequest(
      'listen-many',
      'subscriptions/listen',
      { notifications: { taskIds: ids } },
      WITH_TASKS,
    );

    const before = log.statements.length;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        Authorization: 'Bearer token-alice',
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    readers.push(reader);
    const ack = JSON.parse((await reader.next())!.data);
    const reads = log.statements
      .slice(before)
      .filter((statement) => /^SELECT\b/i.test(statement.trim()) && statement.includes('"mcp_tasks"'));

    expect(ack.params.notifications).toEqual({ taskIds: [mine[1], mine[0]] });
    expect(reads.length).toBe(1);
    await reader.cancel();
    for (const gate of ['ids-1', 'ids-2', 'ids-bob']) TaskGates.open(gate);
  });
});

/**
 * Targets nest-floor and nest-fastify-floor: what a NestJS 11 app costs before any MCP library or
 * database. One controller POST route on `/mcp` behind a global guard that checks the bearer token
 * (BENCH_TOKEN); the route reads the JSON body Nest's own body parser made and answers just enough
 * MCP for the benchmark, like the node:http floor: `initialize` hands out a session id,
 * notifications get 202, `tools/call` of `echo` sends the text back. Express by default, Fastify
 * with `HTTP_ADAPTER=fastify`. Runs as its own process (PORT, HOST).
 *
 * With `DATABASE_URL` (targets nest-floor-pg, nest-fastify-floor-pg and nest-floor-pg-async) the same route also does
 * the least an audit trail can: every POST's row goes into the package's own `mcp_events` table
 * (created by its migrations at start-up) and the answer waits for that row's commit (synchronous;
 * with `AUDIT_COMMIT=async`, `synchronous_commit` off for the batch's transaction).
 * Rows go through the package's own group committer, two batches in flight, each one INSERT
 * of one array per column; nothing else of the package runs. What these floors serve is the most
 * a Nest app that commits a row per request can serve on the machine.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  Body,
  Controller,
  Headers,
  HttpCode,
  Module,
  Post,
  Res,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { GroupCommitter } from '../../src/mcp/persistence/group-committer';

const token = process.env.BENCH_TOKEN ?? '';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the echo route reads whatever params the load sends
type Message = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, any> };

/** The reply object of either adapter, as far as this route uses it. */
interface Reply {
  status(code: number): Reply;
  code?(code: number): Reply;
  header(name: string, value: string): Reply;
  send(body?: unknown): unknown;
}

/** Lets a request through only with `Authorization: Bearer <BENCH_TOKEN>`; anything else is 401. */
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>()
      .headers.authorization;
    if (!token || header !== `Bearer ${token}`) throw new UnauthorizedException('Invalid bearer token');
    return true;
  }
}

/** The columns of `mcp_events`, in the order the floor's INSERT gives them. */
const EVENT_COLUMNS = [
  ['id', 'varchar'],
  ['created_at', 'timestamp'],
  ['direction', 'varchar'],
  ['mount', 'varchar'],
  ['session_ref', 'varchar'],
  ['principal_key', 'varchar'],
  ['kind', 'varchar'],
  ['method', 'varchar'],
  ['protocol_version', 'varchar'],
  ['request', 'jsonb'],
  ['response', 'jsonb'],
  ['status', 'integer'],
  ['duration_ms', 'integer'],
] as const;

/**
 * The audit floor's row writer: the package's own `GroupCommitter` (rows submitted while a batch
 * is in flight form the next batch, two batches in flight), each batch one INSERT ... SELECT FROM
 * unnest of one array per column. `write` resolves once its row is committed.
 */
class AuditFloor {
  private readonly committer: GroupCommitter<unknown[], void>;

  /** `asyncCommit`: each batch commits with `synchronous_commit` off for its own transaction, as `AUDIT_COMMIT=async` does. */
  constructor(pool: Pool, asyncCommit: boolean) {
    const statement = {
      name: asyncCommit ? 'floor_insert_async' : 'floor_insert',
      text:
        `INSERT INTO mcp_events (${EVENT_COLUMNS.map(([name]) => name).join(', ')}) SELECT * FROM unnest(` +
        `${EVENT_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})` +
        (asyncCommit ? ` WHERE (SELECT set_config('synchronous_commit', 'off', true)) = 'off'` : ''),
    };
    // Loaded from the built package (the bench builds it first), like its migrations.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const built = require(join(process.cwd(), 'dist', 'mcp', 'persistence', 'group-committer')) as {
      GroupCommitter: typeof GroupCommitter;
    };
    this.committer = new built.GroupCommitter<unknown[], void>(async (rows) => {
      const values = EVENT_COLUMNS.map((_, column) => rows.map((row) => row[column]));
      await pool.query({ ...statement, values });
      return rows.map(() => undefined);
    });
  }

  write(row: unknown[]): Promise<void> {
    return this.committer.submit(row);
  }
}

let audit: AuditFloor | null = null;

/** Commits the row of one exchange (audit floors only), then hands back the answer. */
async function audited(
  message: Message,
  sessionId: string | undefined,
  status: number,
  answer: unknown,
): Promise<unknown> {
  if (!audit) return answer;
  await audit.write([
    randomUUID(),
    new Date(),
    'in',
    '/mcp',
    sessionId ?? null,
    'bench',
    message?.id === undefined ? 'notification' : 'request',
    message?.method ?? null,
    '2025-11-25',
    JSON.stringify(message),
    answer === undefined ? null : JSON.stringify(answer),
    status,
    0,
  ]);
  return answer;
}

@Controller('mcp')
class EchoController {
  @Post()
  @HttpCode(200)
  post(
    @Body() message: Message,
    @Headers('mcp-session-id') sessionId: string | undefined,
    @Res({ passthrough: true }) reply: Reply,
  ): unknown {
    const status = { code: 200 };
    const body = this.answer(message, sessionId, reply, status);
    return audit ? audited(message, sessionId, status.code, body) : body;
  }

  /** The answer to one POST; `status.code` is set to the HTTP status it is sent with. */
  private answer(message: Message, sessionId: string | undefined, reply: Reply, status: { code: number }): unknown {
    if (message?.method === 'initialize') {
      reply.header('Mcp-Session-Id', randomBytes(16).toString('hex'));
      return {
        jsonrpc: '2.0',
        id: message.id,
        result: {
          protocolVersion: message.params?.protocolVersion ?? '2025-11-25',
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'nest-floor-echo', version: '1.0.0' },
        },
      };
    }
    if (!sessionId) {
      reply.status((status.code = 400));
      return { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Mcp-Session-Id required' } };
    }
    if (message.id === undefined) {
      reply.status((status.code = 202));
      return undefined;
    }
    if (message.method === 'tools/call' && message.params?.name === 'echo') {
      const text = String(message.params.arguments?.text ?? '');
      return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }] } };
    }
    return {
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32601, message: `Method not found: ${message.method}` },
    };
  }
}

@Module({ controllers: [EchoController], providers: [{ provide: APP_GUARD, useClass: BearerGuard }] })
class FloorModule {}

/** Audit floors: the package's migrations on DATABASE_URL, then the pool the rows go through. */
async function startAudit(url: string): Promise<AuditFloor> {
  // Loaded from the built package (the bench builds it first): only its migrations, never its code paths.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { MCP_MIGRATIONS } = require(join(process.cwd(), 'dist', 'mcp', 'persistence', 'migrations')) as {
    MCP_MIGRATIONS: NonNullable<ConstructorParameters<typeof DataSource>[0]['migrations']>;
  };
  const schema = new DataSource({ type: 'postgres', url, migrations: MCP_MIGRATIONS });
  await schema.initialize();
  await schema.runMigrations();
  await schema.destroy();
  return new AuditFloor(new Pool({ connectionString: url, max: 10 }), process.env.AUDIT_COMMIT === 'async');
}

async function main(): Promise<void> {
  if (process.env.DATABASE_URL) audit = await startAudit(process.env.DATABASE_URL);
  const logger = ['error', 'warn'] as const;
  const port = Number(process.env.PORT);
  const host = process.env.HOST || '127.0.0.1';
  if (process.env.HTTP_ADAPTER === 'fastify') {
    // Loaded only here so that the Express floor does not carry Fastify in its memory.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { FastifyAdapter } = require('@nestjs/platform-fastify') as typeof import('@nestjs/platform-fastify');
    const app = await NestFactory.create(FloorModule, new FastifyAdapter(), { logger: [...logger] });
    await app.listen(port, host);
    return;
  }
  const app = await NestFactory.create(FloorModule, { logger: [...logger] });
  await app.listen(port, host);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

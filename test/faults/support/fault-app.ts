import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES } from '../../../src/mcp';
import { createHttpApp, type HttpAdapterName } from '../../support/http-app';

/** One line the app logged. */
export interface LoggedLine {
  level: 'error' | 'warn' | 'log' | 'debug' | 'verbose' | 'fatal';
  context: string;
  message: string;
  at: number;
}

/** A logger that keeps every line (and prints errors and warnings, like the e2e apps). */
export class RecordingLogger implements LoggerService {
  readonly lines: LoggedLine[] = [];

  private record(level: LoggedLine['level'], message: unknown, rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : '';
    this.lines.push({
      level,
      context,
      message: typeof message === 'string' ? message : JSON.stringify(message),
      at: Date.now(),
    });
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.record('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.record('warn', message, rest);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.record('log', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.record('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.record('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.record('fatal', message, rest);
  }

  /** Lines with the same level and text logged less than `windowMs` apart (a flood). */
  repeatsWithin(windowMs: number, levels: LoggedLine['level'][] = ['error', 'warn']): LoggedLine[] {
    const last = new Map<string, number>();
    const repeats: LoggedLine[] = [];
    for (const line of this.lines) {
      if (!levels.includes(line.level)) continue;
      const key = `${line.level} ${line.context} ${line.message}`;
      const previous = last.get(key);
      if (previous !== undefined && line.at - previous < windowMs) repeats.push(line);
      else last.set(key, line.at);
    }
    return repeats;
  }
}

/** A booted app of a fault suite. */
export interface FaultApp {
  app: INestApplication;
  baseUrl: string;
  logger: RecordingLogger;
  close(): Promise<void>;
}

/**
 * The pg pool settings of the fault suites (TypeORM `extra`): a connection attempt, or a wait for
 * a free connection, gives up after 2 s. `statement_timeout` is left out on purpose, so the
 * suites prove the module's own `database.timeoutMs` bounds a stalled statement.
 */
export const FAULT_POOL = { max: 10, connectionTimeoutMillis: 2000, idleTimeoutMillis: 10_000 };

/**
 * Boots a Nest app with TypeORM on `databaseUrl` (with `FAULT_POOL`) and the given imports, on a
 * free loopback port, with a recording logger.
 */
export async function startFaultApp(
  databaseUrl: string,
  metadata: ModuleMetadata,
  adapter: HttpAdapterName = 'express',
): Promise<FaultApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: databaseUrl,
        entities: MCP_ENTITIES,
        extra: FAULT_POOL,
        retryAttempts: 0,
      }),
      ...(metadata.imports ?? []),
    ],
    providers: metadata.providers ?? [],
  }).compile();
  const logger = new RecordingLogger();
  const app = createHttpApp(moduleRef, adapter, { logger });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${port}`, logger, close: () => app.close() };
}

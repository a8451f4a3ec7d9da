import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpEvent } from '../persistence/entities/mcp-event.entity';
import { McpInboundSession } from '../persistence/entities/inbound-session.entity';
import { McpTask } from '../persistence/entities/task.entity';
import { McpAuditQuery } from './mcp-audit-query.service';
import { MCP_CONSOLE_OPTIONS } from './mcp-console.constants';
import { createMcpConsoleController } from './mcp-console.controller';
import { MCP_CONSOLE_RAW_OPTIONS, McpConsoleConfigurableModule } from './mcp-console.module-definition';
import {
  resolveConsoleExtras,
  resolveConsoleOptions,
  type McpConsoleModuleAsyncOptions,
  type McpConsoleModuleForRootOptions,
  type McpConsoleOptions,
} from './mcp-console.options';

/** Shared by every console: Nest 11 identifies dynamic modules by object identity. */
const CONSOLE_TYPEORM_FEATURE = TypeOrmModule.forFeature([McpEvent, McpInboundSession, McpTask]);

/**
 * The audit console: read-only, server-rendered pages of the sessions, the audit rows
 * (`mcp_events`, filterable, with their envelopes), the tasks and a throughput and latency chart
 * of the last hour, at `path` (default `mcp-console`) behind the required `guard`. It reads the
 * package's tables through the host's TypeORM connection (PostgreSQL or SQLite) and writes
 * nothing. Runs on Express and Fastify.
 */
@Module({})
export class McpConsoleModule {
  /** Mounts the console with static options; refuses to boot without a guard. */
  static forRoot(options: McpConsoleModuleForRootOptions): DynamicModule {
    const routes = resolveConsoleExtras(options ?? {});
    return McpConsoleModule.withRoutes(
      { ...McpConsoleConfigurableModule.forRoot(options), module: McpConsoleModule },
      routes,
    );
  }

  /** Mounts the console with options from a factory, class or existing provider; `path` and `guard` stay synchronous. */
  static forRootAsync(options: McpConsoleModuleAsyncOptions): DynamicModule {
    const routes = resolveConsoleExtras(options ?? {});
    return McpConsoleModule.withRoutes(
      { ...McpConsoleConfigurableModule.forRootAsync(options), module: McpConsoleModule },
      routes,
    );
  }

  private static withRoutes(
    definition: DynamicModule,
    { path, guards }: ReturnType<typeof resolveConsoleExtras>,
  ): DynamicModule {
    return {
      ...definition,
      imports: [...(definition.imports ?? []), CONSOLE_TYPEORM_FEATURE],
      controllers: [createMcpConsoleController(path, guards)],
      providers: [
        ...(definition.providers ?? []),
        {
          provide: MCP_CONSOLE_OPTIONS,
          useFactory: (raw: McpConsoleOptions) => resolveConsoleOptions(raw),
          inject: [MCP_CONSOLE_RAW_OPTIONS],
        },
        McpAuditQuery,
      ],
      exports: [McpAuditQuery],
    };
  }
}

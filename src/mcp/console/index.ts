/**
 * The audit console of durable-mcp (the `durable-mcp/console` entry point): `McpConsoleModule`,
 * read-only pages of the sessions, audit rows and tasks behind the app's own guard, with its
 * options, guard and scope types, and `McpAuditQuery`, the queries behind those pages, which
 * the module provides for a host's own views.
 *
 * @example
 * ```ts
 * import { McpConsoleModule } from 'durable-mcp/console';
 *
 * imports: [McpConsoleModule.forRoot({ guard: AdminGuard })]; // GET /mcp-console
 * ```
 *
 * @packageDocumentation
 */
export { McpConsoleModule } from './mcp-console.module';
export type {
  McpConsoleOptions,
  McpConsoleModuleExtras,
  McpConsoleModuleForRootOptions,
  McpConsoleModuleAsyncOptions,
  McpConsoleGuard,
  McpConsoleScope,
  McpConsoleScopeFn,
} from './mcp-console.options';

// The read side: the queries behind the pages (provided and exported by McpConsoleModule).
export { McpAuditQuery } from './mcp-audit-query.service';
export type {
  McpConsoleCursor,
  McpConsolePage,
  McpConsoleSession,
  McpConsoleTask,
  McpConsoleEvent,
  McpConsoleEventFilter,
  McpConsoleThroughput,
} from './mcp-console-records.interface';

// The store records (from `durable-mcp/stores`) that the records above extend.
export type { McpEventRecord, McpEventDirection, McpPrincipal, McpLogLevel } from '../stores';

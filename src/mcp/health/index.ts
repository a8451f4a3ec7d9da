/**
 * Health checks of durable-mcp (the `durable-mcp/health` entry point), on `@nestjs/terminus`, an
 * optional peer that only `McpHealthModule.forRoot` loads: the module, its options and the
 * indicator a host's own `@HealthCheck()` controller calls.
 *
 * @example
 * ```ts
 * import { McpHealthModule } from 'durable-mcp/health';
 *
 * // GET /health/live and GET /health/ready
 * imports: [McpModule.forRoot({ auth }), McpHealthModule.forRoot()];
 * ```
 *
 * @packageDocumentation
 */
export { McpHealthModule } from './mcp-health.module';
export { McpHealthIndicator } from './mcp-health.indicator';
export type {
  McpHealthGuard,
  McpHealthModuleOptions,
  McpHealthQueueCheck,
  McpHealthTasksCheck,
  McpHealthAuditCheck,
  McpHealthStdioCheck,
} from './mcp-health.options';

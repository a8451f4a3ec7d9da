import { Module, type DynamicModule } from '@nestjs/common';
import { requireOptionalPeer } from '../optional-peer';
import { McpDrainModule } from '../server/shutdown/mcp-drain.module';
import { MCP_HEALTH_INDICATOR_SERVICE, MCP_HEALTH_OPTIONS } from './mcp-health.constants';
import { createMcpHealthController } from './mcp-health.controller';
import { McpHealthIndicator } from './mcp-health.indicator';
import { resolveHealthOptions, type McpHealthModuleOptions } from './mcp-health.options';

/**
 * Health checks of the MCP module on `@nestjs/terminus` (an optional peer, loaded only here).
 * `McpHealthModule.forRoot()` provides `McpHealthIndicator` and serves `GET /health/live` and
 * `GET /health/ready`; `forRoot({ path: false })` only provides the indicator, for a host's own
 * `@HealthCheck()` controller.
 */
@Module({})
export class McpHealthModule {
  /** Provides `McpHealthIndicator` and, unless `path: false`, the live and ready routes. */
  static forRoot(options: McpHealthModuleOptions = {}): DynamicModule {
    const resolved = resolveHealthOptions(options);
    const terminus = requireOptionalPeer<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'McpHealthModule');
    return {
      module: McpHealthModule,
      // No log line per failing probe (a probe every few seconds during an outage): the 503 body carries the report.
      imports: [terminus.TerminusModule.forRoot({ logger: false }), McpDrainModule],
      controllers: resolved.path === false ? [] : [createMcpHealthController(resolved.path, terminus.HealthCheckService)],
      providers: [
        { provide: MCP_HEALTH_OPTIONS, useValue: resolved },
        { provide: MCP_HEALTH_INDICATOR_SERVICE, useFactory: () => new terminus.HealthIndicatorService() },
        McpHealthIndicator,
      ],
      exports: [McpHealthIndicator],
    };
  }
}

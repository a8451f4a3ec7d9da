import { Module, type DynamicModule, type Type } from '@nestjs/common';
import type { HealthCheckService } from '@nestjs/terminus';
import { requireOptionalPeer } from '../optional-peer';
import { McpDrainModule } from '../server/shutdown/mcp-drain.module';
import { MCP_HEALTH_INDICATOR_SERVICE, MCP_HEALTH_OPTIONS } from './mcp-health.constants';
import { createMcpHealthController, createMcpHealthDetailsController } from './mcp-health.controller';
import { McpHealthIndicator } from './mcp-health.indicator';
import { resolveHealthOptions, type McpHealthModuleOptions, type McpResolvedHealthOptions } from './mcp-health.options';
import { McpReadinessService } from './mcp-readiness.service';

/**
 * Health checks of the MCP module on `@nestjs/terminus` (an optional peer, loaded only here).
 * `McpHealthModule.forRoot()` provides `McpHealthIndicator` and serves `GET /health/live` and
 * `GET /health/ready`; `forRoot({ path: false })` only provides the indicator, for a host's own
 * `@HealthCheck()` controller. With `detailsGuard` the two routes answer `{ status }` alone and
 * `GET /health/details` the whole report, behind those guards.
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
      controllers:
        resolved.path === false
          ? []
          : controllersOf(resolved.path, resolved.detailsGuards, terminus.HealthCheckService),
      providers: [
        { provide: MCP_HEALTH_OPTIONS, useValue: resolved },
        { provide: MCP_HEALTH_INDICATOR_SERVICE, useFactory: () => new terminus.HealthIndicatorService() },
        McpHealthIndicator,
        McpReadinessService,
      ],
      exports: [McpHealthIndicator],
    };
  }
}

function controllersOf(
  path: string,
  guards: McpResolvedHealthOptions['detailsGuards'],
  healthCheckService: Type<HealthCheckService>,
): Type<unknown>[] {
  if (!guards) return [createMcpHealthController(path, healthCheckService, false)];
  return [
    createMcpHealthController(path, healthCheckService, true),
    createMcpHealthDetailsController(path, healthCheckService, guards),
  ];
}

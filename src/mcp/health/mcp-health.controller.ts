import { Controller, Get, Inject, type Type } from '@nestjs/common';
import type { HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { McpHealthIndicator } from './mcp-health.indicator';

/**
 * Creates the controller of `McpHealthModule.forRoot({ path })`: `GET <path>/live` (the process
 * answers; never the database) and `GET <path>/ready` (every check of `McpHealthIndicator`, and
 * not draining). Terminus answers 200 when all are up and 503 with the same report otherwise.
 * Neither route has a guard of the module: a host's global guards still apply.
 */
export function createMcpHealthController(path: string, healthCheckService: Type<HealthCheckService>): Type<unknown> {
  @Controller(path)
  class McpHealthController {
    constructor(
      @Inject(healthCheckService) private readonly health: HealthCheckService,
      private readonly indicator: McpHealthIndicator,
    ) {}

    /** Liveness: 200 while the process answers HTTP. */
    @Get('live')
    live(): Promise<HealthCheckResult> {
      return this.health.check([() => this.indicator.live()]);
    }

    /** Readiness: 200 when every check is up and the app is not draining, else 503. */
    @Get('ready')
    ready(): Promise<HealthCheckResult> {
      return this.health.check(this.indicator.readiness());
    }
  }
  return McpHealthController;
}

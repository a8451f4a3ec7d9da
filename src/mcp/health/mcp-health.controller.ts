import {
  Controller,
  Get,
  HttpException,
  Inject,
  ServiceUnavailableException,
  UseGuards,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import type { HealthCheckResult, HealthCheckService, HealthCheckStatus } from '@nestjs/terminus';
import { McpHealthIndicator } from './mcp-health.indicator';
import { McpReadinessService } from './mcp-readiness.service';

/** What the public form of a route answers: the overall status alone. */
export interface McpHealthStatusOnly {
  status: HealthCheckStatus;
}

/** Terminus's verdict without its report: the same status code, `{ status }` alone in the body. */
async function statusOnly(check: Promise<HealthCheckResult>): Promise<McpHealthStatusOnly> {
  try {
    return { status: (await check).status };
  } catch (error) {
    if (!(error instanceof HttpException)) throw error;
    const body = error.getResponse() as Partial<HealthCheckResult>;
    throw new ServiceUnavailableException({ status: body.status ?? 'error' });
  }
}

/**
 * Creates the controller of `McpHealthModule.forRoot({ path })`: `GET <path>/live` (the process
 * answers; never the database) and `GET <path>/ready` (every check of `McpHealthIndicator`, and
 * not draining). Terminus answers 200 when all are up and 503 otherwise; with `statusOnly` (a
 * `detailsGuard` is set) the body is `{ status }` alone, else the whole report. Neither route has
 * a guard of the module: a host's global guards still apply.
 */
export function createMcpHealthController(
  path: string,
  healthCheckService: Type<HealthCheckService>,
  publicStatusOnly: boolean,
): Type<unknown> {
  @Controller(path)
  class McpHealthController {
    constructor(
      @Inject(healthCheckService) private readonly health: HealthCheckService,
      private readonly indicator: McpHealthIndicator,
      private readonly readiness: McpReadinessService,
    ) {}

    /** Liveness: 200 while the process answers HTTP. */
    @Get('live')
    live(): Promise<HealthCheckResult | McpHealthStatusOnly> {
      const check = this.health.check([() => this.indicator.live()]);
      return publicStatusOnly ? statusOnly(check) : check;
    }

    /** Readiness: 200 when every check is up and the app is not draining, else 503. */
    @Get('ready')
    async ready(): Promise<HealthCheckResult | McpHealthStatusOnly> {
      const check = this.health.check(await this.readiness.checks());
      return publicStatusOnly ? statusOnly(check) : check;
    }
  }
  return McpHealthController;
}

/**
 * Creates the controller of the details route (`GET <path>/details`) behind the `detailsGuard`
 * guards: the whole readiness report (from the same shared, rate-bounded run as `<path>/ready`)
 * plus the process (pid, uptime); 200 when ready, 503 otherwise.
 */
export function createMcpHealthDetailsController(
  path: string,
  healthCheckService: Type<HealthCheckService>,
  guards: (Type<CanActivate> | CanActivate)[],
): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class McpHealthDetailsController {
    constructor(
      @Inject(healthCheckService) private readonly health: HealthCheckService,
      private readonly indicator: McpHealthIndicator,
      private readonly readiness: McpReadinessService,
    ) {}

    /** The readiness report and the process, for the readers the guards admit. */
    @Get('details')
    async details(): Promise<HealthCheckResult> {
      return this.health.check([...(await this.readiness.checks()), () => this.indicator.live()]);
    }
  }
  return McpHealthDetailsController;
}

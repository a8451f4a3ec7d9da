import { Inject, Injectable } from '@nestjs/common';
import type { HealthIndicatorFunction, HealthIndicatorResult } from '@nestjs/terminus';
import { MCP_HEALTH_OPTIONS } from './mcp-health.constants';
import { McpHealthIndicator } from './mcp-health.indicator';
import type { McpResolvedHealthOptions } from './mcp-health.options';

type Outcomes = PromiseSettledResult<HealthIndicatorResult>[];

/**
 * Readiness for the module's routes, with its cost bounded: the checks that reach out (a
 * `SELECT 1`, a Redis PING, the queues' counts) run at most once per `minIntervalMs`, and probes
 * that arrive while they run share that run. A flood of probes therefore costs the dependencies
 * one round of checks per interval (or per run, with no interval), not one per probe. The drain
 * is read on every probe, so shutdown turns readiness down at once.
 */
@Injectable()
export class McpReadinessService {
  private running: Promise<Outcomes> | null = null;
  private last: { finishedAt: number; outcomes: Outcomes } | null = null;

  constructor(
    private readonly indicator: McpHealthIndicator,
    @Inject(MCP_HEALTH_OPTIONS) private readonly options: McpResolvedHealthOptions,
  ) {}

  /** The readiness checks for terminus: the dependencies' results of the shared or recent run, and the drain now. */
  async checks(): Promise<HealthIndicatorFunction[]> {
    const outcomes = await this.dependencies();
    // A check that threw is replayed as a throw, so terminus treats it as it would have.
    const replayed = outcomes.map((outcome): HealthIndicatorFunction =>
      outcome.status === 'fulfilled' ? () => outcome.value : () => Promise.reject(outcome.reason),
    );
    return [...replayed, () => this.indicator.draining()];
  }

  private dependencies(): Promise<Outcomes> {
    if (this.running) return this.running;
    if (this.last && Date.now() - this.last.finishedAt < this.options.minIntervalMs)
      return Promise.resolve(this.last.outcomes);
    const run = Promise.allSettled(this.indicator.dependencies().map(async (check) => check())).then((outcomes) => {
      this.last = { finishedAt: Date.now(), outcomes };
      this.running = null;
      return outcomes;
    });
    this.running = run;
    return run;
  }
}

import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { McpHealthIndicator } from './mcp-health.indicator';
import { resolveHealthOptions } from './mcp-health.options';
import { McpReadinessService } from './mcp-readiness.service';

/** A dependency check whose runs the spec counts and finishes by hand. */
function gatedCheck() {
  const pending: ((result: HealthIndicatorResult) => void)[] = [];
  const check = () => new Promise<HealthIndicatorResult>((resolve) => pending.push(resolve));
  return {
    check,
    runs: () => pending.length,
    finish: (result: HealthIndicatorResult) => pending.splice(0).forEach((resolve) => resolve(result)),
  };
}

function service(
  dependencies: () => Promise<HealthIndicatorResult>,
  minIntervalMs: number,
  draining: () => HealthIndicatorResult = () => ({ shutdown: { status: 'up' } }),
) {
  const indicator = { dependencies: () => [dependencies], draining } as unknown as McpHealthIndicator;
  return new McpReadinessService(indicator, resolveHealthOptions({ minIntervalMs }));
}

const up = new HealthIndicatorService().check('database').up();

describe('McpReadinessService', () => {
  it('probes that arrive while the checks run share that run, even with no interval', async () => {
    const gate = gatedCheck();
    const readiness = service(gate.check, 0);
    const probes = Promise.all(Array.from({ length: 5 }, () => readiness.checks()));
    await Promise.resolve();
    expect(gate.runs()).toBe(1);
    gate.finish(up);
    const answers = await probes;
    for (const checks of answers)
      expect(await Promise.all(checks.map(async (c) => c()))).toEqual([up, { shutdown: { status: 'up' } }]);
    // Once the run is over, with no interval, the next probe runs the checks again.
    const again = readiness.checks();
    await Promise.resolve();
    expect(gate.runs()).toBe(1);
    gate.finish(up);
    await again;
  });

  it('serves the last result within minIntervalMs, but reads the drain on every probe', async () => {
    const gate = gatedCheck();
    let draining = false;
    const readiness = service(gate.check, 60_000, () => ({
      shutdown: { status: draining ? ('down' as const) : ('up' as const) },
    }));
    const first = readiness.checks();
    await Promise.resolve();
    gate.finish(up);
    await first;
    draining = true;
    const later = await readiness.checks();
    expect(gate.runs()).toBe(0);
    expect(await Promise.all(later.map(async (c) => c()))).toEqual([up, { shutdown: { status: 'down' } }]);
  });

  it('replays a check that threw as a throw', async () => {
    const readiness = service(() => Promise.reject(new Error('boom')), 60_000);
    for (let probe = 0; probe < 2; probe++) {
      const [dependency] = await readiness.checks();
      await expect(dependency()).rejects.toThrow('boom');
    }
  });
});

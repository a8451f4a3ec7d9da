import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { resolveHealthOptions } from './mcp-health.options';
import { redactSecrets } from './redact-secrets';

describe('resolveHealthOptions', () => {
  it('serves /health for the default mount, with the documented thresholds', () => {
    expect(resolveHealthOptions()).toEqual({
      path: 'health',
      mount: 'default',
      databaseTimeoutMs: null,
      queue: { minWorkers: 1, maxWaitingAgeMs: 60_000 },
      tasks: { minWorkers: 1, maxWaitingAgeMs: 60_000, timeoutMs: 5000 },
      audit: { maxBacklog: 1000 },
      stdio: { stuckMs: 30_000 },
      minIntervalMs: 0,
    });
    expect(
      resolveHealthOptions({
        path: false,
        mount: 'tools',
        databaseTimeoutMs: 800,
        queue: { minWorkers: 0 },
        audit: { maxBacklog: 10 },
        stdio: { stuckMs: 5 },
      }),
    ).toMatchObject({
      path: false,
      mount: 'tools',
      databaseTimeoutMs: 800,
      queue: { minWorkers: 0, maxWaitingAgeMs: 60_000 },
      tasks: { minWorkers: 0, maxWaitingAgeMs: 60_000, timeoutMs: 5000 },
      audit: { maxBacklog: 10 },
      stdio: { stuckMs: 5 },
    });
  });

  it('task queue thresholds follow the call queue ones unless given', () => {
    expect(resolveHealthOptions({ queue: { maxWaitingAgeMs: 9000 } }).tasks).toEqual({
      minWorkers: 1,
      maxWaitingAgeMs: 9000,
      timeoutMs: 5000,
    });
    expect(
      resolveHealthOptions({
        queue: { minWorkers: 0 },
        tasks: { minWorkers: 2, maxWaitingAgeMs: 500, timeoutMs: 800 },
      }),
    ).toMatchObject({
      queue: { minWorkers: 0, maxWaitingAgeMs: 60_000 },
      tasks: { minWorkers: 2, maxWaitingAgeMs: 500, timeoutMs: 800 },
    });
  });

  it.each([
    [{ tasks: { maxWaitingAgeMs: 0 } }, 'option "tasks.maxWaitingAgeMs" must be a positive integer'],
    [{ tasks: { minWorkers: 1.5 } }, 'option "tasks.minWorkers" must be an integer of 0 or more'],
    [{ tasks: { timeoutMs: '5s' } }, 'option "tasks.timeoutMs" must be a positive integer'],
    [{ tasks: { concurrency: 1 } }, 'unknown option "concurrency"'],
    [{ tasks: [] }, 'option "tasks" must be an object'],
    [{ path: 'a b' }, 'option "path" must be a URL path'],
    [{ mount: '' }, 'option "mount" must be a non-empty string'],
    [{ databaseTimeoutMs: 0 }, 'option "databaseTimeoutMs" must be a positive integer'],
    [{ queue: { maxWaitingAgeMs: -5 } }, 'option "queue.maxWaitingAgeMs" must be a positive integer'],
    [{ queue: { workers: 1 } }, 'unknown option "workers"'],
    [{ audit: 3 }, 'option "audit" must be an object'],
    [{ readyPath: 'x' }, 'unknown option "readyPath"'],
    [{ minIntervalMs: -1 }, 'option "minIntervalMs" must be an integer of 0 or more'],
    [{ minIntervalMs: 60_001 }, 'option "minIntervalMs" must be at most 60000'],
    [{ detailsGuard: 'admin' }, 'option "detailsGuard" must be a CanActivate class or instance'],
    [{ detailsGuard: [] }, 'option "detailsGuard" must be a CanActivate class or instance'],
    [
      { detailsGuard: { canActivate: () => true }, path: false },
      'option "detailsGuard" guards the details route, and path: false serves no route',
    ],
  ])('refuses %p at boot', (options, message) => {
    expect(() => resolveHealthOptions(options as never)).toThrow(McpConfigurationError);
    expect(() => resolveHealthOptions(options as never)).toThrow(message);
  });
});

describe('resolveHealthOptions detailsGuard and minIntervalMs', () => {
  it('keeps the reports public and the checks uncached unless asked, and takes guard classes and instances', () => {
    expect(resolveHealthOptions().detailsGuards).toBeUndefined();
    const instance = { canActivate: () => true };
    class OpsGuard {
      canActivate(): boolean {
        return true;
      }
    }
    expect(resolveHealthOptions({ detailsGuard: OpsGuard, minIntervalMs: 2000 })).toMatchObject({
      detailsGuards: [OpsGuard],
      minIntervalMs: 2000,
    });
    expect(resolveHealthOptions({ detailsGuard: [OpsGuard, instance] }).detailsGuards).toEqual([OpsGuard, instance]);
  });
});

describe('redactSecrets', () => {
  it('masks credentials in URLs and password pairs, and leaves the rest', () => {
    expect(redactSecrets('connect to redis://:s3cret@10.0.0.1:6379 failed')).toBe(
      'connect to redis://***@10.0.0.1:6379 failed',
    );
    expect(redactSecrets('postgres://app:hunter2@db/prod and password=hunter2; host=db')).toBe(
      'postgres://***@db/prod and password=***; host=db',
    );
    expect(redactSecrets('connect ECONNREFUSED 127.0.0.1:5432')).toBe('connect ECONNREFUSED 127.0.0.1:5432');
  });
});

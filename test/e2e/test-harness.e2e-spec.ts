import { freeLoopbackPort, spawnReady } from '../support/child-process';
import { killAllWorkers, startWorker } from '../fixtures/client/worker-process';

/** Whether a process of this pid exists: signal 0 checks without sending anything. */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

/** A Node child that never prints anything and ignores SIGTERM: only SIGKILL ends it. */
const SLEEPER = "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);";

/**
 * The harness's own promises about child processes: a child that never becomes ready fails the
 * suite with a message naming the deadline, and is gone (not left running) when the failure is
 * reported.
 */
describe('test harness: child processes under a readiness deadline', () => {
  afterAll(killAllWorkers);

  it('spawnReady rejects a child that never prints its readiness line, naming the deadline, and has killed it', async () => {
    const error = await spawnReady(process.execPath, ['-e', SLEEPER], {}, /never printed/, 300).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const match = /^(.+) \(pid (\d+)\) was not ready within 300 ms and was killed:\n$/.exec((error as Error).message);
    expect(match?.[1]).toBe(`${process.execPath} -e ${SLEEPER}`);
    expect(processExists(Number(match![2]))).toBe(false);
  });

  it('startWorker rejects a worker that cannot become ready (its database is unreachable), naming the deadline, and has killed it', async () => {
    const databaseUrl = `postgres://postgres@127.0.0.1:${await freeLoopbackPort()}/none`;
    const error = await startWorker({ databaseUrl, client: { servers: {} } }, 500).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const match = /^worker (\d+) was not ready within 500 ms and was killed:\n/.exec((error as Error).message);
    expect(match).not.toBeNull();
    expect(processExists(Number(match![1]))).toBe(false);
  });

  it('killAllWorkers ends a worker that is still booting, tracked from its spawn', async () => {
    const databaseUrl = `postgres://postgres@127.0.0.1:${await freeLoopbackPort()}/none`;
    const starting = startWorker({ databaseUrl, client: { servers: {} } }).catch((e: unknown) => e);
    await killAllWorkers();
    const error = await starting;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^worker exited \(null\) before it was ready:\n/);
  });
});

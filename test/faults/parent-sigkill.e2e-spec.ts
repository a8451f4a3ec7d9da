import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, waitUntil } from '../fixtures/stdio/stdio-test-kit';
import { TS_REGISTER } from '../support/child-process';

const ROOT = join(__dirname, '..', '..');

/**
 * Pids of the processes whose argv holds `marker` (a zombie included: `isAlive`). A supervisor
 * orphaned by the SIGKILL exits once it reaped its server, and is then PID 1's to reap: a zombie
 * has no argv, so it is not listed here; the servers' own pids are checked with `isAlive`.
 */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker) && isAlive(pid)) found.push(pid);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/**
 * A stdio server never outlives the process that started it, even when that process is
 * SIGKILLed (nothing of it runs to clean up) and the server ignores both the end of stdin and
 * SIGTERM: the supervisor in between ends the server's process group. This covers a pooled
 * process too, so a crashed worker leaves nothing for the next boot to find.
 */
describe('stdio servers after their parent is SIGKILLed', () => {
  const marker = `stdio-parent-${randomUUID()}`;
  let parent: ChildProcess | undefined;

  afterAll(() => {
    parent?.kill('SIGKILL');
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  });

  it('ends a hanging spawn-per-call server and a pooled one that both ignore EOF and SIGTERM', async () => {
    parent = spawn(process.execPath, ['-r', TS_REGISTER, join(ROOT, 'test/fixtures/stdio/stdio-parent.ts')], {
      cwd: ROOT,
      env: { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.spec.json'), STDIO_PARENT_MARKER: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      parent?.once('exit', (_code, signal) => resolve(signal)),
    );
    let out = '';
    let err = '';
    parent.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    parent.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // Readiness deadline: a parent that hangs at boot fails with its stderr (afterAll kills it).
    await waitUntil(
      () => /ready (\{.*\})\n/.test(out) || parent?.exitCode !== null,
      60_000,
      'the parent to start its servers',
    ).catch((error: Error) => {
      throw new Error(`${error.message}:\n${err}`);
    });
    const match = /ready (\{.*\})\n/.exec(out);
    if (!match) throw new Error(`the parent did not get ready:\n${err}`);
    const { hanging, pooled } = JSON.parse(match[1]) as { hanging: number; pooled: number };

    // Two servers, each under its supervisor: four processes carry the marker.
    expect(isAlive(hanging)).toBe(true);
    expect(isAlive(pooled)).toBe(true);
    expect(processesWith(marker)).toEqual(expect.arrayContaining([hanging, pooled]));
    expect(processesWith(marker)).toHaveLength(4);

    const killedAt = Date.now();
    parent.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // SIGTERM (ignored), then SIGKILL after killGraceMs (2 s by default): all gone within three
    // times that plus 2 s of the parent's death.
    await waitUntil(() => processesWith(marker).length === 0, 20_000, 'every process of the killed parent to be gone');
    expect(Date.now() - killedAt).toBeLessThanOrEqual(2_000 * 3 + 2_000);
    expect(isAlive(hanging)).toBe(false);
    expect(isAlive(pooled)).toBe(false);
  }, 90_000);
});

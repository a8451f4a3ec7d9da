import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, type ReadyChild } from './child-process';

/** One master, one replica and three sentinels of a test's own, on free loopback ports. */
export interface RedisSentinelGroup {
  /** The master's name the sentinels watch. */
  name: string;
  /** The sentinels' addresses, for `{ sentinels, name }`. */
  sentinels: Array<{ host: string; port: number }>;
  /** The first master's port. */
  masterPort: number;
  /** The replica's port (the master after a failover). */
  replicaPort: number;
  /** SIGKILLs the current master process. */
  killMaster(): Promise<void>;
  /**
   * SIGSTOPs the replica's process: it keeps its connections but answers nothing, so it acknowledges
   * no write until `resumeReplica`. Call `resumeReplica` in a `finally`.
   */
  pauseReplica(): void;
  /** SIGCONTs the replica's process (nothing happens when it is not paused). */
  resumeReplica(): void;
  /** Kills every process and removes the directory. */
  destroy(): Promise<void>;
}

/**
 * Starts the group (no persistence; a master is taken for down after 1 s); resolves once the
 * replica is in sync and every sentinel is up.
 */
export async function startRedisSentinelGroup(name = 'mcp-master'): Promise<RedisSentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sentinel-'));
  const children: ReadyChild[] = [];
  const server = (port: number, extra: string[]) =>
    spawnReady(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
      {},
      /Ready to accept connections|MASTER <-> REPLICA sync: Finished/,
    );
  try {
    const masterPort = await freeLoopbackPort();
    const replicaPort = await freeLoopbackPort();
    // The replica's first sync starts at once instead of after the default 5 s.
    const master = await server(masterPort, ['--repl-diskless-sync-delay', '0']);
    children.push(master);
    const replica = await spawnReady(
      'redis-server',
      [
        '--port',
        String(replicaPort),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--replicaof',
        '127.0.0.1',
        String(masterPort),
        '--repl-diskless-sync-delay',
        '0',
      ],
      {},
      /MASTER <-> REPLICA sync: Finished/,
    );
    children.push(replica);
    let paused = false;
    const resumeReplica = () => {
      if (paused) replica.child.kill('SIGCONT');
      paused = false;
    };
    const sentinels: Array<{ host: string; port: number }> = [];
    for (let i = 0; i < 3; i++) {
      const port = await freeLoopbackPort();
      const conf = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      children.push(await spawnReady('redis-server', [conf, '--sentinel'], {}, /\+monitor master/));
      sentinels.push({ host: '127.0.0.1', port });
    }
    return {
      name,
      sentinels,
      masterPort,
      replicaPort,
      pauseReplica: () => {
        paused = true;
        replica.child.kill('SIGSTOP');
      },
      resumeReplica,
      killMaster: async () => {
        const exited = new Promise((resolve) => master.child.once('exit', resolve));
        master.child.kill('SIGKILL');
        await exited;
      },
      destroy: async () => {
        // A stopped process would only take SIGTERM once continued.
        resumeReplica();
        await Promise.all(children.map((child) => child.stop(2_000)));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(children.map((child) => child.stop(2_000)));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

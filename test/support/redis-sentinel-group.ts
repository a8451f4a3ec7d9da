import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, type ReadyChild } from './child-process';

/** One master, one or more replicas and three sentinels of a test's own, on free loopback ports. */
export interface RedisSentinelGroup {
  /** The master's name the sentinels watch. */
  name: string;
  /** The sentinels' addresses, for `{ sentinels, name }`. */
  sentinels: Array<{ host: string; port: number }>;
  /** The first master's port. */
  masterPort: number;
  /** The first replica's port (the master after a failover, with one replica). */
  replicaPort: number;
  /** Every replica's port. */
  replicaPorts: number[];
  /** SIGKILLs the current master process. */
  killMaster(): Promise<void>;
  /**
   * SIGSTOPs every replica's process: each keeps its connections but answers nothing, so it
   * acknowledges no write until `resumeReplica`. Call `resumeReplica` in a `finally`.
   */
  pauseReplica(): void;
  /** SIGCONTs the replicas' processes (nothing happens when they are not paused). */
  resumeReplica(): void;
  /** SIGKILLs every replica's process: the master lists no replica from then on. */
  killReplicas(): Promise<void>;
  /** Kills every process and removes the directory. */
  destroy(): Promise<void>;
}

/**
 * Starts the group with `replicas` replicas (no persistence; a master is taken for down after
 * 1 s); resolves once every replica is in sync and every sentinel is up. With two replicas, the one
 * not promoted by a failover follows the new master, so the new master has a replica again.
 */
export async function startRedisSentinelGroup(name = 'mcp-master', replicas = 1): Promise<RedisSentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sentinel-'));
  const children: ReadyChild[] = [];
  // The replicas' syncs start at once instead of after the default 5 s (any node may become the master).
  const server = (port: number, extra: string[], ready: RegExp) =>
    spawnReady(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        // Each node its own file: a replica writes the RDB of its sync there, which another would load.
        '--dbfilename',
        `dump-${port}.rdb`,
        '--repl-diskless-sync-delay',
        '0',
        ...extra,
      ],
      {},
      ready,
    );
  try {
    const masterPort = await freeLoopbackPort();
    const master = await server(masterPort, [], /Ready to accept connections/);
    children.push(master);
    const replicaPorts: number[] = [];
    const replicaChildren: ReadyChild[] = [];
    for (let i = 0; i < replicas; i++) {
      const port = await freeLoopbackPort();
      const replica = await server(
        port,
        ['--replicaof', '127.0.0.1', String(masterPort)],
        /MASTER <-> REPLICA sync: Finished/,
      );
      children.push(replica);
      replicaChildren.push(replica);
      replicaPorts.push(port);
    }
    let paused = false;
    const resumeReplica = () => {
      if (paused) replicaChildren.forEach((replica) => replica.child.kill('SIGCONT'));
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
      replicaPort: replicaPorts[0],
      replicaPorts,
      pauseReplica: () => {
        paused = true;
        replicaChildren.forEach((replica) => replica.child.kill('SIGSTOP'));
      },
      resumeReplica,
      killReplicas: async () => {
        await Promise.all(
          replicaChildren.map((replica) => {
            const exited = new Promise((resolve) => replica.child.once('exit', resolve));
            replica.child.kill('SIGKILL');
            return exited;
          }),
        );
      },
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

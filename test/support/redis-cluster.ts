import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ephemeralPortsStart, freeLoopbackPort, loopbackPortFree, spawnReady, type ReadyChild } from './child-process';
import { pollUntil } from './polling';

const run = promisify(execFile);

/** Three masters with one replica each (or more), of a test's own, on free loopback ports. */
export interface RedisCluster {
  /** The seed nodes, for `{ cluster: { nodes } }` (every node of the cluster). */
  nodes: Array<{ host: string; port: number }>;
  /** The ports of the masters, as the cluster was created. */
  masterPorts: number[];
  /**
   * SIGKILLs the master that serves `key`'s hash slot (asked of a live node) and resolves once the
   * process exited, with its port. Its replica takes over after `cluster-node-timeout`.
   */
  killMasterOf(key: string): Promise<number>;
  /**
   * SIGSTOPs the replica of the master that serves `key`'s hash slot: it keeps its connections
   * but acknowledges no write until `resume` (call it in a `finally`; `destroy` resumes it too).
   * Resolves with the replica's and the master's ports.
   */
  pauseReplicaOf(key: string): Promise<{ port: number; masterPort: number; resume(): void }>;
  /** SIGKILLs that replica: its master lists no replica from then on. Resolves with the same ports. */
  killReplicaOf(key: string): Promise<{ port: number; masterPort: number }>;
  /** Kills every process and removes the directory. */
  destroy(): Promise<void>;
}

/**
 * A port whose cluster bus port (the port + 10000) is free too, and that no other node of this
 * cluster took: a cluster node listens on both, the bus port below the ephemeral range too.
 */
async function freeNodePort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await freeLoopbackPort(ephemeralPortsStart() - 10_000);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if (await loopbackPortFree(port + 10_000)) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('No free pair of loopback ports for a cluster node');
}

/** `CLUSTER INFO` of the node at `port`, or undefined when it does not answer. */
async function clusterInfo(port: number): Promise<string | undefined> {
  try {
    return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info'])).stdout;
  } catch {
    return undefined;
  }
}

/** `redis-cli` against the first node of `ports` that answers. */
async function ask(ports: number[], ...args: string[]): Promise<string> {
  let failure: unknown;
  for (const port of ports) {
    try {
      return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/** The port of the master serving `slot`, read from `CLUSTER NODES` (`<id> <ip:port@bus> <flags> ... <slots>`). */
function masterPortOf(nodes: string, slot: number): number | undefined {
  for (const line of nodes.split('\n')) {
    const fields = line.trim().split(' ');
    if (!(fields[2] ?? '').split(',').includes('master') || (fields[2] ?? '').includes('fail')) continue;
    const serves = fields.slice(8).some((range) => {
      const [from, to = from] = range.split('-').map(Number);
      return slot >= from && slot <= to;
    });
    if (serves) return Number(/:(\d+)@/.exec(fields[1])?.[1]);
  }
  return undefined;
}

/**
 * Starts `3 * (1 + replicas)` `redis-server --cluster-enabled yes` processes (no persistence) in a
 * temporary directory, makes them a cluster of three masters with `replicas` replicas each
 * (`redis-cli --cluster create ... --cluster-replicas <replicas>`), and resolves once every node
 * reports `cluster_state:ok`, knows every node, and every replica is in sync with its master (so
 * that it may take over when its master is killed). With two replicas, the one not elected when
 * its master dies follows the new master, so the new master has a replica again.
 */
export async function startRedisCluster(replicas = 1): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-cluster-'));
  const children: ReadyChild[] = [];
  const paused = new Set<ReadyChild>();
  const destroy = async () => {
    // A stopped process would only take SIGTERM once continued.
    for (const child of paused) child.child.kill('SIGCONT');
    await Promise.all(children.map((child) => child.stop(2_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    const ports: number[] = [];
    const count = 3 * (1 + replicas);
    for (let i = 0; i < count; i++) ports.push(await freeNodePort(taken));
    for (const port of ports) {
      children.push(
        await spawnReady(
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
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '2000',
            // The replicas' first sync starts at once instead of after the default 5 s.
            '--repl-diskless-sync-delay',
            '0',
          ],
          {},
          /Ready to accept connections/,
        ),
      );
    }
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    for (const port of ports) {
      await pollUntil(
        `cluster node ${port} reports cluster_state:ok with ${count} nodes`,
        async () => {
          const info = await clusterInfo(port);
          return info && /cluster_state:ok/.test(info) && new RegExp(`cluster_known_nodes:${count}\\b`).test(info)
            ? true
            : undefined;
        },
        30_000,
        100,
      );
    }
    // A replica whose first sync has not finished refuses to fail over (it has never been in touch
    // with its master's data): the cluster is ready once every replica's link to its master is up.
    for (const port of ports) {
      await pollUntil(
        `cluster node ${port} is a master or a replica in sync`,
        async () => {
          const info = await ask([port], 'info', 'replication');
          return /role:master/.test(info) || /master_link_status:up/.test(info) ? true : undefined;
        },
        30_000,
        100,
      );
    }
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(ports[0]), 'cluster', 'nodes']);
    const masterPorts = stdout
      .split('\n')
      // `<id> <ip:port@bus> <flags> ...`; the flags are `master`, `myself,master`, `slave`...
      .filter((line) => (line.split(' ')[2] ?? '').split(',').includes('master'))
      .map((line) => Number(/:(\d+)@/.exec(line)?.[1]))
      .filter((port) => ports.includes(port));
    const killed = new Set<number>();
    const killMasterOf = async (key: string) => {
      const alive = ports.filter((port) => !killed.has(port));
      const slot = Number((await ask(alive, 'cluster', 'keyslot', key)).trim());
      const port = masterPortOf(await ask(alive, 'cluster', 'nodes'), slot);
      const master = port === undefined ? undefined : children[ports.indexOf(port)];
      if (port === undefined || !master) throw new Error(`No live master serves slot ${slot} of ${key}`);
      const exited = new Promise((resolve) => master.child.once('exit', resolve));
      master.child.kill('SIGKILL');
      await exited;
      killed.add(port);
      return port;
    };
    /** The first replica of the master that serves `key`'s hash slot. */
    const replicaOf = async (key: string) => {
      const alive = ports.filter((port) => !killed.has(port));
      const slot = Number((await ask(alive, 'cluster', 'keyslot', key)).trim());
      const masterPort = masterPortOf(await ask(alive, 'cluster', 'nodes'), slot);
      if (masterPort === undefined) throw new Error(`No live master serves slot ${slot} of ${key}`);
      // `slave0:ip=127.0.0.1,port=30001,state=online,offset=...,lag=0`
      const port = Number(/^slave0:.*\bport=(\d+)/m.exec(await ask([masterPort], 'info', 'replication'))?.[1]);
      const replica = children[ports.indexOf(port)];
      if (!replica) throw new Error(`The master on ${masterPort} (slot ${slot} of ${key}) has no replica`);
      return { port, masterPort, replica };
    };
    const killReplicaOf = async (key: string) => {
      const { port, masterPort, replica } = await replicaOf(key);
      const exited = new Promise((resolve) => replica.child.once('exit', resolve));
      replica.child.kill('SIGKILL');
      await exited;
      paused.delete(replica);
      killed.add(port);
      return { port, masterPort };
    };
    const pauseReplicaOf = async (key: string) => {
      const { port, masterPort, replica } = await replicaOf(key);
      replica.child.kill('SIGSTOP');
      paused.add(replica);
      const resume = () => {
        if (paused.delete(replica)) replica.child.kill('SIGCONT');
      };
      return { port, masterPort, resume };
    };
    return {
      nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
      masterPorts,
      killMasterOf,
      pauseReplicaOf,
      killReplicaOf,
      destroy,
    };
  } catch (error) {
    await destroy();
    throw error;
  }
}

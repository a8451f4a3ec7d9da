import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every namespace the benchmark makes is named `dmcp-bench-<pid of the bench>-<index>`. */
const PREFIX = 'dmcp-bench-';

/** One network namespace with a veth link to the root namespace. */
export interface BenchNamespace {
  /** `ip netns` name. */
  name: string;
  /** The root namespace's end of the link: what the replica dials to reach the delay proxy. */
  hostAddress: string;
  /** The namespace's end of the link: where the replica listens. */
  address: string;
}

async function ip(...args: string[]): Promise<string> {
  try {
    return (await run('ip', args, { encoding: 'utf8' })).stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`ip ${args.join(' ')} failed: ${stderr || (error as Error).message}`, { cause: error });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Names of the benchmark's namespaces that exist now. */
export async function listBenchNamespaces(): Promise<string[]> {
  const out = await ip('netns', 'list');
  return out
    .split('\n')
    .map((line) => line.split(/\s+/)[0])
    .filter((name) => name?.startsWith(PREFIX));
}

/**
 * Removes namespaces an earlier run left behind (it was killed before its cleanup ran): those
 * whose bench process is gone. A namespace of a run still going is left alone.
 */
export async function removeStaleNamespaces(): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await listBenchNamespaces()) {
    const pid = Number(/^dmcp-bench-(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) {
      await ip('netns', 'del', name);
      removed.push(name);
    }
  }
  return removed;
}

/**
 * Makes namespace `index` of this run: `ip netns add`, a veth pair with one end moved into it,
 * `10.231.<base + index>.1/24` on the root end and `.2` inside, both ends and the namespace's
 * loopback up. Deleting the namespace deletes the pair with it.
 */
export async function createNamespace(index: number, subnetBase = 10): Promise<BenchNamespace> {
  const name = `${PREFIX}${process.pid}-${index}`;
  const subnet = `10.231.${subnetBase + index}`;
  // Interface names have at most 15 characters.
  const tag = `${process.pid.toString(36)}${index}`;
  const outside = `dmb${tag}h`;
  const inside = `dmb${tag}n`;
  await ip('netns', 'add', name);
  try {
    await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    await ip('link', 'set', inside, 'netns', name);
    await ip('addr', 'add', `${subnet}.1/24`, 'dev', outside);
    await ip('link', 'set', outside, 'up');
    await ip('-n', name, 'addr', 'add', `${subnet}.2/24`, 'dev', inside);
    await ip('-n', name, 'link', 'set', inside, 'up');
    await ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (error) {
    await removeNamespace(name).catch(() => undefined);
    await ip('link', 'del', outside).catch(() => undefined);
    throw error;
  }
  return { name, hostAddress: `${subnet}.1`, address: `${subnet}.2` };
}

/** Deletes a namespace (and with it the veth pair whose end is inside it). */
export async function removeNamespace(name: string): Promise<void> {
  await ip('netns', 'del', name);
}

/** Throws, saying what is needed, when `ip netns` cannot be used here (not root, no iproute2). */
export async function assertNetnsUsable(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error('bench:replicas makes network namespaces (ip netns) and must run as root');
  }
  await ip('netns', 'list');
}

/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, or `BENCH_CPU_PROF=<dir> npm run bench:server`)
 * by self time: per package (Node core, the garbage collector, idle, durable-mcp, each npm
 * package), per file and per function, each as a share of all samples.
 *
 *   ts-node --transpile-only bench/cpu-profile.summary.ts <file.cpuprofile>... [--top N]
 *
 * Idle is a share of its own; the `busy` column gives each item's share of the samples that were
 * not idle, which is what compares between runs of different load.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The package a frame belongs to: an npm package, durable-mcp, Node core, or one of V8's pseudo frames. */
function packageOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'garbage collector';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'program (V8, native)';
    if (functionName === '(root)') return 'root';
    return 'native / V8 builtins';
  }
  if (url.startsWith('node:')) return 'Node core';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  if (url.includes('/dist/mcp/')) return 'durable-mcp';
  if (url.includes('/dist/')) return 'example app';
  return 'other';
}

/** A file's name from its package on (`@nestjs/core/router/router-execution-context.js`). */
function fileOf(frame: CallFrame): string {
  const { url } = frame;
  if (!url) return packageOf(frame);
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function summarise(path: string, top: number): string[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byPackage = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const frame = frames.get(id);
    if (!frame) return;
    total += delta;
    add(byPackage, packageOf(frame), delta);
    add(byFile, fileOf(frame), delta);
    add(byFunction, `${frame.functionName || '(anonymous)'} ${fileOf(frame)}:${frame.lineNumber + 1}`, delta);
  });
  const idle = byPackage.get('idle') ?? 0;
  const busy = total - idle;
  const pct = (value: number, of: number) => `${((100 * value) / (of || 1)).toFixed(1).padStart(5)} %`;
  const isIdle = (key: string) => key === 'idle' || key.startsWith('(idle)');
  const table = (title: string, map: Map<string, number>) => [
    `${title}: share of all samples, of the busy ones`,
    ...[...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, value]) => `  ${pct(value, total)}  ${isIdle(key) ? '       ' : pct(value, busy)}  ${key}`),
  ];
  return [
    `${path}: ${(total / 1e6).toFixed(1)} s sampled, ${pct(idle, total).trim()} idle`,
    ...table('by package', byPackage),
    ...table('by file', byFile),
    ...table('by function', byFunction),
  ];
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
if (!args.length) {
  process.stderr.write('usage: bench/cpu-profile.summary.ts <file.cpuprofile>... [--top N]\n');
  process.exit(2);
}
for (const path of args) process.stdout.write(`${summarise(path, top).join('\n')}\n\n`);

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import type { TargetSpec } from './target.process';

/** What the targets need from the run: where the repo is, a database per app of ours, the bearer token. */
export interface TargetSetup {
  repoRoot: string;
  /** Database URL for each target of ours, by target key (`ours`, `ours-fastify`, `ours-async`). */
  databaseUrls: Record<string, string>;
  token: string;
}

/** Keys of every target, in the order of the first round. */
export const TARGET_KEYS = ['bare', 'sdk1', 'sdk2', 'mcpnest', 'ours', 'ours-fastify', 'ours-async'] as const;

/** The targets of ours: the example app on PostgreSQL, each with its own database. */
export const OURS_KEYS = ['ours', 'ours-fastify', 'ours-async'] as const;

/**
 * Runs a TypeScript program of this folder as plain JavaScript (`node -e`): the target then
 * carries no TypeScript compiler in its memory, so its RSS is its own. Modules resolve from the
 * child's working directory (the repo root).
 */
function programArgs(file: string): string[] {
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
    },
  });
  return ['-e', outputText];
}

/** True when some compiled file of the example app (outside the library) mentions `name`. */
function appReads(repoRoot: string, name: string): boolean {
  const dist = join(repoRoot, 'dist');
  const visit = (dir: string): boolean =>
    readdirSync(dir).some((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return entry !== 'mcp' && visit(path);
      return entry.endsWith('.js') && readFileSync(path, 'utf8').includes(name);
    });
  return existsSync(dist) && visit(dist);
}

/**
 * Every target, in benchmark order: the floor (bare node:http), the peers (official SDK 1.x and
 * 2.x, mcp-nest 2.x) and ours (the example app on PostgreSQL: the defaults, `HTTP_ADAPTER=fastify`
 * and `AUDIT_COMMIT=async`). `only` keeps the targets whose key or label it lists.
 */
export function benchTargets(setup: TargetSetup, only?: string[]): TargetSpec[] {
  const main = join('dist', 'main.js');
  if (!existsSync(join(setup.repoRoot, main))) {
    throw new Error(`${main} is missing: build the example app first (npm run bench:server runs nest build)`);
  }
  const peer = { readyTimeoutMs: 30_000, token: setup.token, env: { BENCH_TOKEN: setup.token } };
  const ours = (key: string, env: Record<string, string | undefined>) => ({
    args: [main],
    // Inline processing, no Redis: the run measures the HTTP endpoint on PostgreSQL only. The
    // switches of the other variants are removed so that ours(pg) runs on the defaults.
    env: {
      DATABASE_URL: setup.databaseUrls[key],
      MCP_TOKENS: `bench=${setup.token}`,
      REDIS_URL: undefined,
      HTTP_ADAPTER: undefined,
      AUDIT_COMMIT: undefined,
      ...env,
    },
    readyTimeoutMs: 60_000,
    token: setup.token,
    role: 'ours' as const,
    checksToken: true,
    database: true,
  });
  const asyncNote = appReads(setup.repoRoot, 'AUDIT_COMMIT')
    ? undefined
    : 'this build of the example app does not read AUDIT_COMMIT: it ran with synchronous audit commits';
  const all: TargetSpec[] = [
    {
      key: 'bare',
      label: 'bare-http',
      role: 'floor',
      checksToken: false,
      database: false,
      args: programArgs(join(__dirname, 'echo-http.server.ts')),
      ...peer,
    },
    {
      key: 'sdk1',
      label: 'sdk-1.x',
      role: 'peer',
      checksToken: true,
      database: false,
      args: programArgs(join(__dirname, 'sdk-http.server.ts')),
      ...peer,
    },
    {
      key: 'sdk2',
      label: 'sdk-2.x',
      role: 'peer',
      checksToken: true,
      database: false,
      args: programArgs(join(__dirname, 'sdk2-http.server.ts')),
      ...peer,
    },
    {
      key: 'mcpnest',
      label: 'mcp-nest-2.x',
      role: 'peer',
      checksToken: true,
      database: false,
      args: programArgs(join(__dirname, 'mcp-nest.server.ts')),
      ...peer,
    },
    { key: 'ours', label: 'ours(pg)', ...ours('ours', {}) },
    // The adapter is checked on the wire (a Nest app on Express says `X-Powered-By: Express`).
    { key: 'ours-fastify', label: 'ours-fastify(pg)', ...ours('ours-fastify', { HTTP_ADAPTER: 'fastify' }) },
    { key: 'ours-async', label: 'ours-async(pg)', note: asyncNote, ...ours('ours-async', { AUDIT_COMMIT: 'async' }) },
  ];
  if (!only?.length) return all;
  const unknown = only.filter((name) => !all.some((t) => t.key === name || t.label === name));
  if (unknown.length)
    throw new Error(
      `BENCH_TARGETS names unknown target(s) ${unknown.join(', ')}; known: ${all.map((t) => t.key).join(', ')}`,
    );
  return all.filter((t) => only.includes(t.key) || only.includes(t.label));
}

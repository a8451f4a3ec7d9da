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
  /** An earlier commit built on its own (BENCH_BASELINE), and which variants of ours to run on it. */
  baseline?: { dir: string; short: string; variants: string[] };
}

/** Keys of every target, in the order of the first round. */
export const TARGET_KEYS = [
  'bare',
  'bare-pg',
  'bare-pg-async',
  'sdk1',
  'sdk2',
  'mcpnest',
  'nest-floor',
  'nest-fastify-floor',
  'nest-floor-pg',
  'nest-fastify-floor-pg',
  'nest-floor-pg-async',
  'ours',
  'ours-fastify',
  'ours-async',
  'ours-stateless',
] as const;

/** The targets of ours: the example app on PostgreSQL, each with its own database. */
export const OURS_KEYS = ['ours', 'ours-fastify', 'ours-async', 'ours-stateless'] as const;

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
function appReads(appRoot: string, name: string): boolean {
  const dist = join(appRoot, 'dist');
  const visit = (dir: string): boolean =>
    readdirSync(dir).some((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return entry !== 'mcp' && visit(path);
      return entry.endsWith('.js') && readFileSync(path, 'utf8').includes(name);
    });
  return existsSync(dist) && visit(dist);
}

/** The variants of ours: the example app on the defaults, and with one switch each. */
const OURS_VARIANTS: {
  key: (typeof OURS_KEYS)[number];
  env: Record<string, string>;
  revision?: TargetSpec['revision'];
}[] = [
  { key: 'ours', env: {} },
  // The adapter is checked on the wire (a Nest app on Express says `X-Powered-By: Express`).
  { key: 'ours-fastify', env: { HTTP_ADAPTER: 'fastify' } },
  { key: 'ours-async', env: { AUDIT_COMMIT: 'async' } },
  // The defaults, driven with stateless 2026-07-28 calls instead of a session.
  { key: 'ours-stateless', env: {}, revision: 'stateless' },
];

/**
 * One variant of the example app built in `appRoot` (the working tree, or an earlier commit
 * checked out on its own), on the database of `key`.
 *
 * The example app has read the same variables since the first commit: HOST, PORT, DATABASE_URL,
 * REDIS_URL and MCP_TOKENS as `principal=token` pairs, so an earlier build gets the same
 * environment as the working tree's. HTTP_ADAPTER and AUDIT_COMMIT are later additions; an older
 * build ignores them, which the output notes (AUDIT_COMMIT from the build's files, the adapter on
 * the wire).
 */
function appTarget(
  setup: TargetSetup,
  appRoot: string,
  key: string,
  variant: (typeof OURS_VARIANTS)[number],
): Omit<TargetSpec, 'label' | 'role'> {
  return {
    key,
    args: [join('dist', 'main.js')],
    cwd: appRoot,
    // Inline processing, no Redis: the run measures the HTTP endpoint on PostgreSQL only. The
    // switches of the other variants are removed so that ours(pg) runs on the defaults.
    env: {
      DATABASE_URL: setup.databaseUrls[key],
      MCP_TOKENS: `bench=${setup.token}`,
      REDIS_URL: undefined,
      HTTP_ADAPTER: undefined,
      AUDIT_COMMIT: undefined,
      ...variant.env,
    },
    note:
      variant.env.AUDIT_COMMIT && !appReads(appRoot, 'AUDIT_COMMIT')
        ? 'this build of the example app does not read AUDIT_COMMIT: it ran with synchronous audit commits'
        : undefined,
    readyTimeoutMs: 60_000,
    token: setup.token,
    checksToken: true,
    database: true,
    revision: variant.revision,
  };
}

/** The baseline's targets: the variants of ours it mirrors, keyed `baseline`, `baseline-fastify`, `baseline-async`. */
function baselineTargets(setup: TargetSetup): TargetSpec[] {
  const baseline = setup.baseline;
  if (!baseline) return [];
  return OURS_VARIANTS.filter((v) => baseline.variants.includes(v.key)).map((variant) => {
    const name = variant.key.replace(/^ours/, 'baseline');
    return {
      ...appTarget(setup, baseline.dir, name, variant),
      label: `${name}(${baseline.short})`,
      role: 'baseline' as const,
      mirrors: variant.key,
    };
  });
}

/**
 * Every target, in benchmark order: the floors (bare node:http, a guarded Nest controller on
 * Express and on Fastify, and the same two committing an audit row per request), the peers (official SDK 1.x and
 * 2.x, mcp-nest 2.x) and ours (the example app on PostgreSQL: the defaults, `HTTP_ADAPTER=fastify`
 * and `AUDIT_COMMIT=async`). `only` keeps the targets whose key or label it lists. The baseline's
 * targets (BENCH_BASELINE) come last and are not filtered by `only`.
 */
export function benchTargets(setup: TargetSetup, only?: string[]): TargetSpec[] {
  const main = join('dist', 'main.js');
  if (!existsSync(join(setup.repoRoot, main))) {
    throw new Error(`${main} is missing: build the example app first (npm run bench:server runs nest build)`);
  }
  const peer = { readyTimeoutMs: 30_000, token: setup.token, env: { BENCH_TOKEN: setup.token } };
  const ours = OURS_VARIANTS.map((variant) => ({
    ...appTarget(setup, setup.repoRoot, variant.key, variant),
    label: `${variant.key}(pg)`,
    role: 'ours' as const,
  }));
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
    // The same node:http floor committing one row per request before it answers, nothing else:
    // the least any server that keeps an audit row per request answers in, at one connection.
    ...(
      [
        ['bare-pg', 'bare-http(pg)', undefined, 'ours'],
        ['bare-pg-async', 'bare-http-async(pg)', 'async', 'ours-async'],
      ] as const
    ).map(([key, label, commit, bounds]) => ({
      key,
      label,
      role: 'floor' as const,
      mirrors: bounds,
      checksToken: false,
      database: true,
      args: programArgs(join(__dirname, 'echo-http.server.ts')),
      ...peer,
      readyTimeoutMs: 60_000,
      env: { BENCH_TOKEN: setup.token, AUDIT_COMMIT: commit, DATABASE_URL: setup.databaseUrls[key] },
    })),
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
    // The floors of a Nest app: one guarded controller route, no MCP library, no database.
    {
      key: 'nest-floor',
      label: 'nest-floor',
      role: 'floor',
      checksToken: true,
      database: false,
      args: programArgs(join(__dirname, 'nest-floor.server.ts')),
      ...peer,
      env: { BENCH_TOKEN: setup.token, HTTP_ADAPTER: undefined, DATABASE_URL: undefined },
    },
    {
      key: 'nest-fastify-floor',
      label: 'nest-fastify-floor',
      role: 'floor',
      checksToken: true,
      database: false,
      args: programArgs(join(__dirname, 'nest-floor.server.ts')),
      ...peer,
      env: { BENCH_TOKEN: setup.token, HTTP_ADAPTER: 'fastify', DATABASE_URL: undefined },
    },
    // The same floors committing one audit row per request to PostgreSQL before they answer.
    ...(
      [
        ['nest-floor-pg', 'nest-floor(pg)', undefined, undefined, 'ours'],
        ['nest-fastify-floor-pg', 'nest-fastify-floor(pg)', 'fastify', undefined, 'ours-fastify'],
        ['nest-floor-pg-async', 'nest-floor-async(pg)', undefined, 'async', 'ours-async'],
      ] as const
    ).map(([key, label, adapter, commit, bounds]) => ({
      key,
      label,
      role: 'floor' as const,
      // Measured right next to the variant of ours it bounds, so their ratio is read round by round.
      mirrors: bounds,
      checksToken: true,
      database: true,
      args: programArgs(join(__dirname, 'nest-floor.server.ts')),
      ...peer,
      readyTimeoutMs: 60_000,
      env: {
        BENCH_TOKEN: setup.token,
        HTTP_ADAPTER: adapter,
        AUDIT_COMMIT: commit,
        DATABASE_URL: setup.databaseUrls[key],
      },
    })),
    ...ours,
  ];
  const baseline = baselineTargets(setup);
  if (!only?.length) return [...all, ...baseline];
  const unknown = only.filter((name) => !all.some((t) => t.key === name || t.label === name));
  if (unknown.length)
    throw new Error(
      `BENCH_TARGETS names unknown target(s) ${unknown.join(', ')}; known: ${all.map((t) => t.key).join(', ')}`,
    );
  return [...all.filter((t) => only.includes(t.key) || only.includes(t.label)), ...baseline];
}

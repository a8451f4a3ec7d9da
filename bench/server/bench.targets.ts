import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import type { TargetSpec } from './target.process';

/** What the targets need from the run: where the repo is, the database, the bearer token. */
export interface TargetSetup {
  repoRoot: string;
  databaseUrl: string;
  token: string;
}

/**
 * Runs a TypeScript program of this folder as plain JavaScript (`node -e`): the target then
 * carries no TypeScript compiler in its memory, so its RSS is its own. Modules resolve from the
 * child's working directory (the repo root).
 */
function programArgs(file: string): string[] {
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  return ['-e', outputText];
}

/** The three targets in benchmark order: (a) bare node:http, (b) the official SDK, (c) our example app. */
export function benchTargets(setup: TargetSetup): TargetSpec[] {
  const main = join('dist', 'main.js');
  if (!existsSync(join(setup.repoRoot, main))) {
    throw new Error(`${main} is missing: build the example app first (npm run bench:server runs nest build)`);
  }
  return [
    { key: 'a', label: 'bare-http', args: programArgs(join(__dirname, 'echo-http.server.ts')), env: {}, readyTimeoutMs: 15_000, token: setup.token },
    { key: 'b', label: 'sdk-1.x', args: programArgs(join(__dirname, 'sdk-http.server.ts')), env: {}, readyTimeoutMs: 15_000, token: setup.token },
    {
      key: 'c',
      label: 'ours(pg)',
      args: [main],
      // Inline processing, no Redis: the run measures the HTTP endpoint on PostgreSQL only.
      env: { DATABASE_URL: setup.databaseUrl, MCP_TOKENS: `bench=${setup.token}`, REDIS_URL: undefined },
      readyTimeoutMs: 60_000,
      token: setup.token,
    },
  ];
}

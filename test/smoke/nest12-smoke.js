#!/usr/bin/env node
/**
 * Nest 12 smoke test. NestJS 12 ships as ES modules only, and this package is CommonJS: it loads
 * Nest through `require(esm)` (Node 20.19+, 22.12+, 24). The test packs this package, installs the
 * tarball into one fresh ESM host app (`"type": "module"`, TypeScript compiled with
 * `module: nodenext`) with Nest 12 and the Nest 12 lines of @nestjs/typeorm, @nestjs/passport and
 * @nestjs/bull, then for each run boots the app on a Node release from the npm package `node@<major>`
 * on a throwaway PostgreSQL database with the shipped migrations, and has the official SDK client
 * (`@modelcontextprotocol/sdk` 1.x, installed in the app) connect with a bearer token, list the
 * tools and call them over Streamable HTTP. The `relay` tool calls `echo` again through
 * McpClientService: on a Bull queue configured by the host's `BullModule.forRoot` (Redis), or
 * inline. The audit rows of both calls are checked in the database.
 *
 * Prints one PASS/FAIL line per run (SKIP for Node 24 when npm cannot install it here); exits
 * non-zero when a run fails. Temporary directories, databases and Redis keys are removed whatever
 * happens.
 *
 * Needs PostgreSQL (TEST_PG_URL, a user that may create databases), Redis (TEST_REDIS_URL, default
 * redis://127.0.0.1:6379) and the npm registry. SMOKE_KEEP=1 keeps the temporary app directory.
 */
'use strict';

const { randomBytes } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
const { Redis } = require('ioredis');
const {
  admin,
  bootApp,
  cleanUpOnSignals,
  createCleanups,
  databaseUrl,
  freePort,
  packTarball,
  run,
  stopApp,
  tempDir,
  TOOLS_SOURCE,
} = require('./smoke-support');
const { DEFAULT_REDIS_URL } = require('../support/test-services');

const REDIS_URL = process.env.TEST_REDIS_URL || DEFAULT_REDIS_URL;

/** The host app's packages: Nest 12 and the Nest 12 lines of the integrations this package uses. */
const APP_PACKAGES = [
  '@nestjs/common@^12',
  '@nestjs/core@^12',
  '@nestjs/platform-express@^12',
  '@nestjs/platform-fastify@^12',
  '@nestjs/typeorm@^12',
  '@nestjs/passport@^12',
  '@nestjs/bull@^12',
  // Not used by the app: installed to prove that its Nest 12 line resolves beside the package's peer range.
  '@nestjs/terminus@^12',
  'bull@^4',
  'passport@^0.7',
  'typeorm@^1',
  'pg@^8',
  'reflect-metadata@^0.2',
  'rxjs@^7',
  'class-validator',
  'class-transformer',
  '@modelcontextprotocol/sdk@^1',
];
const APP_DEV_PACKAGES = ['typescript@~5.9', '@types/node@^22'];

/**
 * The runs: a Node major (from npm's `node@<major>`), the HTTP adapter, and whether the client's
 * calls go through Bull. `optional`: a Node that npm cannot install here is reported as SKIP.
 */
const RUNS = [
  { name: 'node22-express-bull', node: '22', adapter: 'express', bull: true },
  { name: 'node22-fastify-inline', node: '22', adapter: 'fastify', bull: false },
  { name: 'node24-express-bull', node: '24', adapter: 'express', bull: true, optional: true },
  { name: 'node20-express-bull', node: '20', adapter: 'express', bull: true },
];

/** How long the app may take to listen, and the client to finish, on a loaded machine. */
const BOOT_DEADLINE_MS = 90_000;
const CLIENT_DEADLINE_MS = 60_000;

const APP_SOURCE = `import 'reflect-metadata';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule } from '@nestjs/bull';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS, McpClientModule, McpClientService, McpModule, McpTool } from 'durable-mcp';

${TOOLS_SOURCE}

const bull: DynamicModule[] = process.env.REDIS_URL
  ? [BullModule.forRoot({ redis: process.env.REDIS_URL, prefix: process.env.BULL_PREFIX })]
  : [];

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: MCP_ENTITIES,
      migrations: MCP_MIGRATIONS,
      migrationsRun: true,
      retryAttempts: 0,
    }),
    ...bull,
    McpModule.forRoot({ auth: (token) => (token === 'secret' ? { key: 'alice' } : null) }),
    McpClientModule.forRoot({ servers: { self: { transport: 'toolset', principal: 'relay' } } }),
  ],
  providers: [EchoTools, RelayTools],
})
export class AppModule {}

async function createApp() {
  if (process.env.HTTP_ADAPTER === 'fastify') {
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    return NestFactory.create(AppModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
  }
  return NestFactory.create(AppModule, { logger: ['error', 'warn'] });
}

// Top-level await: this file is an ES module.
const app = await createApp();
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT), '127.0.0.1');
console.log(\`listening on Node \${process.version}\`);
`;

const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2022',
    lib: ['ES2022'],
    types: ['node'],
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    skipLibCheck: true,
    outDir: 'dist',
    rootDir: 'src',
  },
  include: ['src'],
};

/** The official SDK client: connects with the bearer token, lists and calls the tools, checks a wrong token gets 401; prints one JSON line. */
const CLIENT_SOURCE = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2]);
const client = new Client({ name: 'nest12-smoke', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer secret' } } });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello from Nest 12' } });
  const relay = await client.callTool({ name: 'relay', arguments: { text: 'through the client' } });
  const denied = await fetch(url, { method: 'POST', headers: { Authorization: 'Bearer wrong', 'Content-Type': 'application/json' }, body: '{}' });
  console.log(JSON.stringify({
    protocolVersion: transport.protocolVersion,
    sessionId: transport.sessionId,
    tools: tools.map((tool) => tool.name).sort(),
    echo,
    relay,
    deniedStatus: denied.status,
  }));
} finally {
  await client.close();
}
`;

/** The path of the `node` binary of npm's `node@<major>` (installed into the npx cache on first use); null when npm cannot install it. */
async function nodeBinary(major) {
  try {
    const output = await run('npx', [
      '--prefer-offline',
      '-y',
      '-p',
      `node@${major}`,
      'node',
      '-e',
      'console.log(JSON.stringify([process.execPath, process.version]))',
    ]);
    const [path, version] = JSON.parse(output.trim().split('\n').pop());
    return { path, version };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Runs the SDK client with `node` against `url`; resolves with its JSON answer. */
async function callWithSdkClient(node, dir, url) {
  const output = await Promise.race([
    run(node, ['client.mjs', url], { cwd: dir }),
    new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error(`the SDK client did not finish within ${CLIENT_DEADLINE_MS / 1000} s`)),
        CLIENT_DEADLINE_MS,
      ).unref(),
    ),
  ]);
  return JSON.parse(output.trim().split('\n').pop());
}

/** Deletes the Redis keys under `prefix` (the run's Bull queue). */
async function deleteRedisKeys(prefix) {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/** How many Redis keys the run's Bull queue holds. */
async function countRedisKeys(prefix) {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return (await redis.keys(`${prefix}:mcp-calls:*`)).length;
  } finally {
    redis.disconnect();
  }
}

/** Checks the audit rows: one inbound echo call by alice (the bearer token's principal) and one outbound relayed call. */
async function checkAuditRows(dbUrl) {
  const rows = new Client({ connectionString: dbUrl });
  await rows.connect();
  try {
    const { rows: inbound } = await rows.query(
      `SELECT principal_key, is_error FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call' AND request->'params'->>'name' = 'echo'`,
    );
    // The SDK client's echo call, and the relayed one (an in-process toolset call, principal 'relay').
    const byAlice = inbound.filter((row) => row.principal_key === 'alice');
    if (byAlice.length !== 1 || byAlice[0].is_error !== false) {
      throw new Error(
        `expected one inbound mcp_events row for the echo call by alice, found ${JSON.stringify(inbound)}`,
      );
    }
    const { rows: outbound } = await rows.query(
      `SELECT server, is_error FROM mcp_events WHERE direction = 'outbound' AND method = 'tools/call'`,
    );
    if (outbound.length !== 1 || outbound[0].server !== 'self' || outbound[0].is_error !== false) {
      throw new Error(`expected one outbound mcp_events row for the relayed call, found ${JSON.stringify(outbound)}`);
    }
  } finally {
    await rows.end();
  }
}

/** One run: boots the compiled app on `node` with a fresh database, calls it with the SDK client, checks the rows. */
async function smokeRun(runSpec, node, dir, cleanups, log) {
  const db = `durable_mcp_nest12_${randomBytes(4).toString('hex')}`;
  const prefix = `durable-mcp-nest12-${randomBytes(4).toString('hex')}`;
  let app;
  try {
    await admin(`CREATE DATABASE "${db}"`);
    cleanups.add(() => admin(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`));
    if (runSpec.bull) cleanups.add(() => deleteRedisKeys(prefix));
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: databaseUrl(db),
      HTTP_ADAPTER: runSpec.adapter,
      REDIS_URL: runSpec.bull ? REDIS_URL : '',
      BULL_PREFIX: prefix,
    };
    const started = Date.now();
    app = await bootApp({ command: node.path, args: ['dist/main.js'], dir, env, log, deadlineMs: BOOT_DEADLINE_MS });
    log(`booted in ${Math.round((Date.now() - started) / 1000)} s`);

    const answer = await callWithSdkClient(node.path, dir, `http://127.0.0.1:${port}/mcp`);
    log(`SDK client: ${JSON.stringify(answer)}`);
    if (!answer.sessionId) throw new Error(`the SDK client got no session id: ${JSON.stringify(answer)}`);
    if (JSON.stringify(answer.tools) !== JSON.stringify(['echo', 'relay']))
      throw new Error(`tools/list answered ${JSON.stringify(answer.tools)}`);
    if (answer.echo.isError || answer.echo.content?.[0]?.text !== 'hello from Nest 12')
      throw new Error(`tools/call echo answered ${JSON.stringify(answer.echo)}`);
    if (answer.relay.isError || answer.relay.content?.[0]?.text !== 'through the client')
      throw new Error(`tools/call relay answered ${JSON.stringify(answer.relay)}`);
    if (answer.deniedStatus !== 401) throw new Error(`a wrong token got HTTP ${answer.deniedStatus}, expected 401`);
    await checkAuditRows(databaseUrl(db));
    if (runSpec.bull) {
      const keys = await countRedisKeys(prefix);
      if (keys === 0)
        throw new Error(
          `the relayed call left no job under the Bull prefix ${prefix}: it did not go through the queue configured by BullModule.forRoot`,
        );
    }
    return {
      ok: true,
      detail: `Node ${node.version}, ${runSpec.adapter}, ${runSpec.bull ? 'McpClientModule on Bull (BullModule.forRoot)' : 'McpClientModule inline'}: SDK client ${answer.protocolVersion} session, tools/list, tools/call echo and relay with a bearer token, 401 for a wrong one, mcp_events rows`,
    };
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    await stopApp(app);
  }
}

async function main(cleanups) {
  const started = Date.now();
  const tarball = await packTarball(cleanups);
  console.log(`nest12 smoke: packed ${tarball.split('/').pop()} in ${Math.round((Date.now() - started) / 1000)} s`);

  const dir = tempDir('durable-mcp-nest12-', cleanups);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'smoke-nest12', version: '0.0.0', private: true, type: 'module' }, null, 2),
  );
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'main.ts'), APP_SOURCE);
  writeFileSync(join(dir, 'client.mjs'), CLIENT_SOURCE);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));

  let step = Date.now();
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball, ...APP_PACKAGES], { cwd: dir });
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-dev', ...APP_DEV_PACKAGES], {
    cwd: dir,
  });
  const versions = JSON.parse(
    await run(
      'npm',
      [
        'ls',
        '--json',
        '@nestjs/core',
        '@nestjs/typeorm',
        '@nestjs/passport',
        '@nestjs/bull',
        '@nestjs/terminus',
        'typeorm',
        'durable-mcp',
      ],
      { cwd: dir },
    ),
  ).dependencies;
  const version = (name) => versions[name]?.version;
  console.log(
    `nest12 smoke: installed in ${Math.round((Date.now() - step) / 1000)} s: durable-mcp ${version('durable-mcp')}, @nestjs/core ${version('@nestjs/core')}, ` +
      `@nestjs/typeorm ${version('@nestjs/typeorm')}, @nestjs/passport ${version('@nestjs/passport')}, @nestjs/bull ${version('@nestjs/bull')}, @nestjs/terminus ${version('@nestjs/terminus')}, typeorm ${version('typeorm')}`,
  );
  if (!/^12\./.test(version('@nestjs/core') || ''))
    throw new Error(`expected @nestjs/core 12, installed ${version('@nestjs/core')}`);
  // One copy of Nest's container and of TypeORM: the package's require() and the app's import share them.
  const copies = await run('npm', ['ls', '--all', '--parseable', 'typeorm', '@nestjs/core', '@nestjs/common'], {
    cwd: dir,
  }).catch((error) => error.message);
  const paths = copies
    .split('\n')
    .filter((line) => /node_modules\/(typeorm|@nestjs\/core|@nestjs\/common)$/.test(line));
  if (paths.length !== 3)
    throw new Error(`expected one typeorm, one @nestjs/core and one @nestjs/common, found:\n${paths.join('\n')}`);

  step = Date.now();
  await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: dir,
  });
  console.log(`nest12 smoke: compiled to ES modules with tsc in ${Math.round((Date.now() - step) / 1000)} s`);

  const nodes = new Map();
  let ok = true;
  for (const runSpec of RUNS) {
    step = Date.now();
    if (!nodes.has(runSpec.node)) nodes.set(runSpec.node, await nodeBinary(runSpec.node));
    const node = nodes.get(runSpec.node);
    if (node.error) {
      const line = `could not install node@${runSpec.node} from npm: ${node.error.split('\n')[0]}`;
      if (runSpec.optional) {
        console.log(`nest12 smoke ${runSpec.name}: SKIP (${line})`);
        continue;
      }
      ok = false;
      console.log(`nest12 smoke ${runSpec.name}: FAIL (${line})`);
      continue;
    }
    const lines = [];
    const result = await smokeRun(runSpec, node, dir, cleanups, (line) => lines.push(`[${runSpec.name}] ${line}`));
    const seconds = Math.round((Date.now() - step) / 1000);
    if (!result.ok) {
      ok = false;
      for (const line of lines) console.log(line);
    }
    console.log(
      `nest12 smoke ${runSpec.name}: ${result.ok ? 'PASS' : 'FAIL'} in ${seconds} s (${result.ok ? result.detail : result.detail.split('\n')[0]})`,
    );
    if (!result.ok && result.detail.includes('\n')) console.log(result.detail);
  }
  console.log(`nest12 smoke: ${ok ? 'PASS' : 'FAIL'} in ${Math.round((Date.now() - started) / 1000)} s`);
  return ok;
}

const cleanups = createCleanups();
cleanUpOnSignals(cleanups);

main(cleanups)
  .then(async (ok) => {
    const started = Date.now();
    await cleanups.runAll();
    console.log(
      `nest12 smoke: temporary directories, databases and Redis keys removed in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    process.exit(ok ? 0 : 1);
  })
  .catch(async (error) => {
    console.log(`nest12 smoke: FAIL (${error instanceof Error ? error.message : error})`);
    await cleanups.runAll();
    process.exit(1);
  });

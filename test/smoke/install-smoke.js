#!/usr/bin/env node
/**
 * Install smoke test: packs this package, installs the tarball into two fresh Nest 11 apps (one
 * on TypeORM 0.3, one on TypeORM 1.x) the way a user would, compiles each with tsc, boots it on
 * a throwaway PostgreSQL database with the shipped migrations, and calls a tool over HTTP with a
 * bearer token. Prints one PASS/FAIL line per app; exits non-zero when one fails. Temporary
 * directories and databases are removed whatever happens.
 *
 * Needs PostgreSQL (TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test, a user that may
 * create databases) and the npm registry. Set SMOKE_KEEP=1 to keep the temporary directories.
 */
'use strict';

const { randomBytes } = require('node:crypto');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
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

/** The apps: what a user on each TypeORM line would install next to durable-mcp. */
const VARIANTS = [
  { name: 'typeorm-0.3', typeorm: 'typeorm@0.3' },
  { name: 'typeorm-1.x', typeorm: 'typeorm@1' },
];

/** The host app's own packages: Nest 11, TypeORM through @nestjs/typeorm, the pg driver, Passport. */
const APP_PACKAGES = [
  '@nestjs/common@^11',
  '@nestjs/core@^11',
  '@nestjs/platform-express@^11',
  '@nestjs/typeorm@^11',
  '@nestjs/passport@^11',
  'passport@^0.7',
  'pg@^8',
  'reflect-metadata@^0.2',
  'rxjs@^7',
  'class-validator',
  'class-transformer',
];
const APP_DEV_PACKAGES = ['typescript@~5.9', '@types/node@^20'];

const cleanups = createCleanups();

const APP_SOURCE = `import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS, McpClientModule, McpClientService, McpModule, McpTool } from 'durable-mcp';

${TOOLS_SOURCE}

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
    McpModule.forRoot({ auth: (token) => (token === 'secret' ? { key: 'alice' } : null) }),
    McpClientModule.forRoot({ servers: { self: { transport: 'toolset', principal: 'relay' } } }),
  ],
  providers: [EchoTools, RelayTools],
})
export class AppModule {}

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  console.log('listening');
}

bootstrap().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

const TSCONFIG = {
  compilerOptions: {
    module: 'commonjs',
    target: 'ES2022',
    lib: ['ES2022'],
    types: ['node'],
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    skipLibCheck: true,
    outDir: 'dist',
    rootDir: 'src',
  },
  include: ['src'],
};

/** How long the compiled app may take to listen on a loaded machine. */
const BOOT_DEADLINE_MS = 60_000;

/** Boots the compiled app (on this Node) and waits for it to listen; resolves with the child process. */
function boot(dir, port, dbUrl, log) {
  return bootApp({
    command: process.execPath,
    args: ['dist/main.js'],
    dir,
    env: { PORT: String(port), DATABASE_URL: dbUrl },
    log,
    deadlineMs: BOOT_DEADLINE_MS,
  });
}

/** One JSON-RPC POST; returns the HTTP response and the JSON-RPC message (from JSON or an SSE answer). */
async function rpc(url, message, sessionId) {
  const headers = {
    Authorization: 'Bearer secret',
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...(sessionId ? { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' } : {}),
  };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
  const text = await response.text();
  if (!('id' in message)) return { response, body: null };
  let body = null;
  if ((response.headers.get('content-type') || '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = JSON.parse(line.slice(5));
      if (data.id === message.id) body = data;
    }
  } else if (text) {
    body = JSON.parse(text);
  }
  if (response.status !== 200 || !body) throw new Error(`${message.method}: HTTP ${response.status}: ${text}`);
  return { response, body };
}

async function smoke(variant, tarball, lines) {
  const log = (line) => lines.push(`[${variant.name}] ${line}`);
  const dir = tempDir(`durable-mcp-smoke-${variant.name}-`, cleanups);
  const db = `durable_mcp_smoke_${randomBytes(4).toString('hex')}`;
  let app;
  try {
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: `smoke-${variant.name}`, version: '0.0.0', private: true }, null, 2),
    );
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'main.ts'), APP_SOURCE);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));

    let started = Date.now();
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball, variant.typeorm, ...APP_PACKAGES],
      { cwd: dir },
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-dev', ...APP_DEV_PACKAGES], {
      cwd: dir,
    });
    const versions = JSON.parse(
      await run('npm', ['ls', '--json', 'typeorm', '@nestjs/core', 'durable-mcp'], { cwd: dir }),
    ).dependencies;
    log(
      `installed in ${Math.round((Date.now() - started) / 1000)} s: durable-mcp ${versions['durable-mcp'].version}, typeorm ${versions.typeorm.version}, @nestjs/core ${versions['@nestjs/core'].version}`,
    );
    const copies = await run('npm', ['ls', '--all', '--parseable', 'typeorm', '@nestjs/core'], { cwd: dir }).catch(
      (error) => error.message,
    );
    const paths = copies.split('\n').filter((line) => /node_modules\/(typeorm|@nestjs\/core)$/.test(line));
    if (paths.length !== 2) throw new Error(`expected one typeorm and one @nestjs/core, found:\n${paths.join('\n')}`);

    started = Date.now();
    await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: dir,
    });
    log(`compiled with tsc in ${Math.round((Date.now() - started) / 1000)} s`);

    await admin(`CREATE DATABASE "${db}"`);
    cleanups.add(() => admin(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`));
    const port = await freePort();
    app = await boot(dir, port, databaseUrl(db), log);
    const url = `http://127.0.0.1:${port}/mcp`;

    const init = await rpc(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'install-smoke', version: '1.0.0' },
      },
    });
    const sessionId = init.response.headers.get('mcp-session-id');
    if (!sessionId) throw new Error(`initialize returned no Mcp-Session-Id: ${JSON.stringify(init.body)}`);
    await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
    const call = await rpc(
      url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello from the smoke test' } },
      },
      sessionId,
    );
    const content = call.body.result && call.body.result.content;
    if (!Array.isArray(content) || content[0]?.text !== 'hello from the smoke test' || call.body.result.isError) {
      throw new Error(`tools/call echo answered ${JSON.stringify(call.body)}`);
    }
    const relayed = await rpc(
      url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'relay', arguments: { text: 'through the client' } },
      },
      sessionId,
    );
    if (relayed.body.result?.content?.[0]?.text !== 'through the client' || relayed.body.result.isError) {
      throw new Error(`tools/call relay answered ${JSON.stringify(relayed.body)}`);
    }
    const denied = await fetch(url, {
      method: 'POST',
      headers: { Authorization: 'Bearer wrong', 'Content-Type': 'application/json' },
      body: '{}',
    });
    if (denied.status !== 401) throw new Error(`a wrong token got HTTP ${denied.status}, expected 401`);

    const rows = new Client({ connectionString: databaseUrl(db) });
    await rows.connect();
    try {
      const { rows: events } = await rows.query(
        `SELECT principal_key, is_error FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call' AND request->'params'->>'name' = 'echo'`,
      );
      if (events.length !== 1 || events[0].principal_key !== 'alice' || events[0].is_error !== false) {
        throw new Error(`expected one mcp_events row for the echo call by alice, found ${JSON.stringify(events)}`);
      }
      const { rows: outbound } = await rows.query(
        `SELECT server, method FROM mcp_events WHERE direction = 'outbound' AND method = 'tools/call'`,
      );
      if (outbound.length !== 1 || outbound[0].server !== 'self') {
        throw new Error(`expected one outbound mcp_events row for the relayed call, found ${JSON.stringify(outbound)}`);
      }
    } finally {
      await rows.end();
    }
    return {
      ok: true,
      detail: `typeorm ${versions.typeorm.version}: initialize, tools/call echo and relay (McpClientModule inline, no Bull installed) and their mcp_events rows`,
    };
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    await stopApp(app);
  }
}

async function main() {
  const started = Date.now();
  const tarball = await packTarball(cleanups);
  console.log(`install smoke: packed ${tarball.split('/').pop()} in ${Math.round((Date.now() - started) / 1000)} s`);

  const results = await Promise.all(
    VARIANTS.map(async (variant) => {
      const lines = [];
      const result = await smoke(variant, tarball, lines);
      return { variant, lines, ...result };
    }),
  );
  for (const { variant, lines, ok, detail } of results) {
    if (!ok) for (const line of lines) console.log(line);
    console.log(`install smoke ${variant.name}: ${ok ? 'PASS' : 'FAIL'} (${ok ? detail : detail.split('\n')[0]})`);
    if (!ok && detail.includes('\n')) console.log(detail);
  }
  console.log(`install smoke: ${Math.round((Date.now() - started) / 1000)} s`);
  return results.every((r) => r.ok);
}

cleanUpOnSignals(cleanups);

main()
  .then(async (ok) => {
    await cleanups.runAll();
    process.exit(ok ? 0 : 1);
  })
  .catch(async (error) => {
    console.log(`install smoke: FAIL (${error instanceof Error ? error.message : error})`);
    await cleanups.runAll();
    process.exit(1);
  });

import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { demoConfig } from './demo/demo.config';
import { DemoTokenAuthorizer } from './demo/demo-token.authorizer';
import { DemoConsoleGuard } from './demo/demo-console.guard';
import { DemoRelayTools } from './demo/demo-relay.tools';
import { DemoThrottlerGuard } from './demo/demo-throttler.guard';
import { DemoTools } from './demo/demo.tools';
import {
  JwtVerifier,
  MCP_ENTITIES,
  MCP_MIGRATIONS,
  McpAuthorizationServerModule,
  McpClientModule,
  McpModule,
  type McpModuleOptions,
} from './mcp';
import { McpConsoleModule } from './mcp/console';
import { McpHealthModule } from './mcp/health';

/** How long a readiness result serves later probes: one run of the checks a second at most. */
const DEMO_HEALTH_MIN_INTERVAL_MS = 1000;

function databaseOptions(): TypeOrmModuleOptions {
  // No retries: a database that is missing or unreachable stops the app at once (src/main.ts says why).
  const fail = { retryAttempts: 0, toRetry: () => false };
  if (demoConfig.databaseUrl) {
    // The pg pool's own bounds: a connection attempt or a wait for a free connection gives up
    // after 3 s and PostgreSQL cancels a statement after 10 s, so an outage frees the pool and
    // requests answer 503 (the module bounds each operation with database.timeoutMs, 5 s, too).
    const extra = {
      max: 10,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 10_000,
      keepAlive: true,
    };
    return {
      type: 'postgres',
      url: demoConfig.databaseUrl,
      entities: MCP_ENTITIES,
      migrations: MCP_MIGRATIONS,
      migrationsRun: true,
      extra,
      ...fail,
    };
  }
  const file = resolve(demoConfig.sqliteFile);
  mkdirSync(dirname(file), { recursive: true });
  return {
    type: 'better-sqlite3',
    database: file,
    entities: MCP_ENTITIES,
    synchronize: true,
    ...fail,
  };
}

/**
 * Who may call: with AUTH_SERVER_PUBLIC_URL, JWT access tokens of the app's own authorization
 * server; with OAUTH_ISSUER, JWT access tokens of that issuer for this endpoint (the endpoint
 * publishes its Protected Resource Metadata so OAuth clients find the issuer); otherwise the
 * static tokens of MCP_TOKENS.
 */
function authOptions(): Pick<McpModuleOptions, 'auth' | 'oauth'> {
  const own = demoConfig.authServer;
  // The mount names the app's own authorization server in its metadata: no authorizationServers.
  if (own) return { auth: JwtVerifier, oauth: { publicUrl: own.publicUrl, requiredScopes: own.scopes } };
  const oauth = demoConfig.oauth;
  if (!oauth) return { auth: DemoTokenAuthorizer };
  return {
    auth: JwtVerifier,
    oauth: { resource: oauth.audience, authorizationServers: [oauth.issuer], requiredScopes: oauth.requiredScopes },
  };
}

/** The example app: one MCP endpoint at /mcp serving the demo tools, a client that calls it, and the audit console at /mcp-console. */
@Module({
  imports: [
    TypeOrmModule.forRoot(databaseOptions()),
    // AUTH_SERVER_*: the app issues the tokens of its endpoint, its users signing in upstream.
    ...(demoConfig.authServer
      ? [
          McpAuthorizationServerModule.forRoot({
            publicUrl: demoConfig.authServer.publicUrl,
            upstream: demoConfig.authServer.upstream,
            scopes: demoConfig.authServer.scopes,
            allowLoopbackHttp: demoConfig.authServer.allowLoopbackHttp,
            encryptionKeys: demoConfig.authServer.encryptionKeys,
          }),
        ]
      : []),
    // The budget of the throttled tool (`add`), per principal, in this process's memory.
    ThrottlerModule.forRoot([{ limit: demoConfig.throttle.limit, ttl: demoConfig.throttle.ttlMs }]),
    McpModule.forRoot({
      ...authOptions(),
      server: { name: 'durable-mcp-demo', instructions: 'Demo tools: echo, add, fail, whoami, relay_echo.' },
      advanced: { audit: { commit: demoConfig.auditCommit }, shutdown: { drainTimeoutMs: demoConfig.drainTimeoutMs } },
      ...(demoConfig.retention ? { retention: demoConfig.retention } : {}),
    }),
    // The app calls its own toolset through the client, as a durable job: Bull on Redis when
    // REDIS_URL is set, inline otherwise.
    McpClientModule.forRoot({
      servers: { self: { transport: 'toolset', mount: 'default', principal: { key: 'relay', label: 'relay' } } },
      serversFile: demoConfig.serversFile,
      redis: demoConfig.redisUrl,
      ...(demoConfig.redisPrefix ? { queue: { prefix: demoConfig.redisPrefix } } : {}),
    }),
    // GET /health/live and /health/ready answer { status } alone, to anyone (a load balancer needs no
    // token); GET /health/details answers the whole report (the database, the call queue, the task
    // queue, stdio pools, the audit backlog, the drain, the process) to the console administrators.
    // The checks run at most once a second, however many probes come.
    McpHealthModule.forRoot({ detailsGuard: DemoConsoleGuard, minIntervalMs: DEMO_HEALTH_MIN_INTERVAL_MS }),
    // The audit console at /mcp-console, for the console administrators of MCP_CONSOLE_ADMINS only
    // (their token of MCP_TOKENS as Bearer, or as the Basic password); they see every row.
    McpConsoleModule.forRoot({ path: 'mcp-console', guard: DemoConsoleGuard }),
  ],
  providers: [DemoTools, DemoRelayTools, DemoTokenAuthorizer, DemoThrottlerGuard],
})
export class AppModule {}

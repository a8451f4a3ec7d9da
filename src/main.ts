import 'reflect-metadata';
// Before Nest boots: an OpenTelemetry SDK when OTEL_EXPORTER_OTLP_ENDPOINT or METRICS_PORT asks for one.
import { startDemoTelemetry } from './demo/telemetry';
const stopTelemetry = (() => {
  try {
    return startDemoTelemetry(process.env);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
})();
import { ConsoleLogger, Logger, type INestApplication, type NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { serveMcpOverStdio } from './mcp';
import { demoConfig } from './demo/demo.config';
import { startupErrorMessage } from './demo/startup-error';

/** Nest's console logger without its dump of an error that stops the boot: bootstrap's caller reports it. */
class DemoLogger extends ConsoleLogger {
  override error(message: unknown, ...rest: unknown[]): void {
    if (rest[rest.length - 1] === 'ExceptionHandler') return;
    super.error(message, ...rest);
  }
}

/** The HTTP adapters the example app can run on, chosen with HTTP_ADAPTER. */
const HTTP_ADAPTERS = ['express', 'fastify'] as const;
type HttpAdapterName = (typeof HTTP_ADAPTERS)[number];

/** HTTP_ADAPTER names no adapter the example app runs on. */
class UnsupportedHttpAdapterError extends Error {}

/** Reads HTTP_ADAPTER (default express); anything else stops the boot with the allowed values. */
function httpAdapterOf(env: NodeJS.ProcessEnv): HttpAdapterName {
  const name = (env.HTTP_ADAPTER || 'express').trim().toLowerCase();
  if ((HTTP_ADAPTERS as readonly string[]).includes(name)) return name as HttpAdapterName;
  throw new UnsupportedHttpAdapterError(
    `HTTP_ADAPTER="${env.HTTP_ADAPTER}" is not supported: use express (the default) or fastify`,
  );
}

/** Creates the app on the chosen adapter; @nestjs/platform-fastify is only loaded when asked for. */
async function createApp(adapter: HttpAdapterName, options: NestApplicationOptions): Promise<INestApplication> {
  if (adapter === 'express') return NestFactory.create(AppModule, options);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when the Fastify adapter is chosen
  const { FastifyAdapter } = require('@nestjs/platform-fastify') as typeof import('@nestjs/platform-fastify');
  return NestFactory.create(AppModule, new FastifyAdapter(), options);
}

/**
 * `--stdio` (or MCP_TRANSPORT=stdio): the mount serves over stdin/stdout, as a local server that
 * a desktop client starts, for the principal MCP_STDIO_PRINCIPAL; logs go to stderr. EOF on stdin,
 * SIGTERM or SIGINT end it (exit 0).
 */
async function serveStdio(principal: string): Promise<void> {
  const { app } = await serveMcpOverStdio(AppModule, { principal: { key: principal, label: principal } });
  if (stopTelemetry) {
    const close = app.close.bind(app);
    app.close = async () => {
      await close();
      await stopTelemetry().catch(() => undefined);
    };
  }
}

async function bootstrap(): Promise<void> {
  if (demoConfig.stdio) return serveStdio(demoConfig.stdio.principal);
  const adapter = httpAdapterOf(process.env);
  const app = await createApp(adapter, { abortOnError: false, logger: new DemoLogger() });
  // SIGTERM drains (readiness down, new requests 503, calls in flight finish), then exits 0.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  if (stopTelemetry)
    (app.getHttpServer() as import('node:http').Server).once(
      'close',
      () => void stopTelemetry().catch(() => undefined),
    );
  await app.listen(demoConfig.port, demoConfig.host);
  const logger = new Logger('durable-mcp');
  const url = `http://${demoConfig.host}:${demoConfig.port}/mcp`;
  if (demoConfig.authServer) {
    const issuer = `${demoConfig.authServer.publicUrl.replace(/\/+$/, '')}/oauth`;
    logger.log(
      `OAuth: authorization server ${issuer}, users signing in at ${demoConfig.authServer.upstream.kind === 'github' ? 'GitHub' : demoConfig.authServer.upstream.issuer} (register ${issuer}/upstream/callback there as the redirect URI)`,
    );
  }
  if (demoConfig.oauth)
    logger.log(
      `OAuth: JWT access tokens from ${demoConfig.oauth.issuer} for the resource ${demoConfig.oauth.audience}`,
    );
  logger.log(
    `Health: http://${demoConfig.host}:${demoConfig.port}/health/live and /health/ready ({ status } for anyone), /health/details (the report, for the console administrators)`,
  );
  logger.log(
    `MCP endpoint: ${url} (${demoConfig.databaseUrl ? 'PostgreSQL' : 'SQLite under ./data'}; audit commit ${demoConfig.auditCommit}; client calls ${demoConfig.redisUrl ? 'on Bull/Redis' : 'inline'}; HTTP on ${adapter})`,
  );
  const consoleUrl = `http://${demoConfig.host}:${demoConfig.port}/mcp-console`;
  if (demoConfig.consoleAdmins.size) {
    logger.log(
      `Audit console: ${consoleUrl} for the console administrators ${[...demoConfig.consoleAdmins].join(', ')} (their token of MCP_TOKENS as Bearer, or as the password of Basic credentials)`,
    );
  } else {
    logger.warn(
      `Audit console: ${consoleUrl} admits nobody: MCP_CONSOLE_ADMINS is unset (name the principals of MCP_TOKENS that may read every call, e.g. MCP_CONSOLE_ADMINS=alice)`,
    );
  }
  if (demoConfig.generatedToken) {
    // The one place a token is printed: a throwaway demo token, generated because MCP_TOKENS is unset.
    logger.log(`MCP_TOKENS is unset; demo bearer token for this run: ${demoConfig.generatedToken}`);
  }
}

bootstrap().catch((error: unknown) => {
  const message = error instanceof UnsupportedHttpAdapterError ? error.message : startupErrorMessage(error, demoConfig);
  // Over stdio, stdout belongs to the protocol.
  if (demoConfig.stdio) console.error(message);
  else new Logger('durable-mcp').error(message);
  process.exit(1);
});

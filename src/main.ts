import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { demoConfig } from './demo/demo.config';
import { startupErrorMessage } from './demo/startup-error';

/** Nest's console logger without its dump of an error that stops the boot: bootstrap's caller reports it. */
class DemoLogger extends ConsoleLogger {
  override error(message: unknown, ...rest: unknown[]): void {
    if (rest[rest.length - 1] === 'ExceptionHandler') return;
    super.error(message, ...rest);
  }
}

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { abortOnError: false, logger: new DemoLogger() });
  app.enableShutdownHooks();
  await app.listen(demoConfig.port, demoConfig.host);
  const logger = new Logger('durable-mcp');
  const url = `http://${demoConfig.host}:${demoConfig.port}/mcp`;
  logger.log(`MCP endpoint: ${url} (${demoConfig.databaseUrl ? 'PostgreSQL' : 'SQLite under ./data'}; audit commit ${demoConfig.auditCommit}; client calls ${demoConfig.redisUrl ? 'on Bull/Redis' : 'inline'})`);
  if (demoConfig.generatedToken) {
    // The one place a token is printed: a throwaway demo token, generated because MCP_TOKENS is unset.
    logger.log(`MCP_TOKENS is unset; demo bearer token for this run: ${demoConfig.generatedToken}`);
  }
}

bootstrap().catch((error: unknown) => {
  new Logger('durable-mcp').error(startupErrorMessage(error, demoConfig));
  process.exit(1);
});

import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { demoConfig } from './demo/demo.config';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  await app.listen(demoConfig.port, demoConfig.host);
  const logger = new Logger('durable-mcp');
  const url = `http://${demoConfig.host}:${demoConfig.port}/mcp`;
  logger.log(`MCP endpoint: ${url} (${demoConfig.databaseUrl ? 'PostgreSQL' : 'SQLite under ./data'}; client calls ${demoConfig.redisUrl ? 'on Bull/Redis' : 'inline'})`);
  if (demoConfig.generatedToken) {
    // The one place a token is printed: a throwaway demo token, generated because MCP_TOKENS is unset.
    logger.log(`MCP_TOKENS is unset; demo bearer token for this run: ${demoConfig.generatedToken}`);
  }
}

void bootstrap();

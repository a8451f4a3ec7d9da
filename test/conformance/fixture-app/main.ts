import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { FixtureAppModule } from './fixture-app.module';

/** The line run-conformance.ts waits for (its FIXTURE_READY_MARKER); the endpoint URL follows it. */
const FIXTURE_READY_MARKER = 'CONFORMANCE_FIXTURE_LISTENING';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(FixtureAppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  process.stdout.write(`${FIXTURE_READY_MARKER} http://127.0.0.1:${port}/mcp\n`);
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(`Fixture app failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});

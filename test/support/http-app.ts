import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES } from '../../src/mcp';

/** A booted Nest app listening on a random loopback port. */
export interface RunningApp {
  app: INestApplication;
  /** e.g. http://127.0.0.1:43121 */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * Boots a real Nest app (TypeORM on the given PostgreSQL database plus the given imports and
 * providers) and listens on loopback.
 */
export async function startApp(databaseUrl: string, metadata: ModuleMetadata): Promise<RunningApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl, entities: MCP_ENTITIES }), ...(metadata.imports ?? [])],
    providers: metadata.providers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

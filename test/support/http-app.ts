import type { INestApplication, ModuleMetadata, NestApplicationOptions } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { FastifyServerOptions } from 'fastify';
import { MCP_ENTITIES, McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';

/** The HTTP adapters the module runs on; the wire suites run once per adapter. */
export const HTTP_ADAPTERS = ['express', 'fastify'] as const;

/** One of `HTTP_ADAPTERS`. */
export type HttpAdapterName = (typeof HTTP_ADAPTERS)[number];

/** A booted Nest app listening on a random loopback port. */
export interface RunningApp {
  app: INestApplication;
  /** e.g. http://127.0.0.1:43121 */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * Creates the Nest application of a compiled testing module on the chosen adapter (Express by
 * default), with `fastifyOptions` for the Fastify instance. On Fastify, `listen` (or `init`
 * followed by the instance's `ready`) must run before requests are served.
 */
export function createHttpApp(
  moduleRef: TestingModule,
  adapter: HttpAdapterName = 'express',
  options: NestApplicationOptions = {},
  fastifyOptions?: FastifyServerOptions,
): INestApplication {
  if (adapter === 'express') return moduleRef.createNestApplication(options);
  // Loaded only here, so the Express suites never load Fastify.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a suite asks for Fastify
  const { FastifyAdapter } = require('@nestjs/platform-fastify') as typeof import('@nestjs/platform-fastify');
  return moduleRef.createNestApplication(new FastifyAdapter(fastifyOptions), options);
}

/**
 * Boots a real Nest app (TypeORM on the given PostgreSQL database plus the given imports and
 * providers) on the chosen HTTP adapter and listens on loopback; `setup` runs before it listens
 * (`enableCors`, `setGlobalPrefix`...).
 */
export async function startApp(
  databaseUrl: string,
  metadata: ModuleMetadata,
  adapter: HttpAdapterName = 'express',
  setup?: (app: INestApplication) => void,
): Promise<RunningApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl, entities: MCP_ENTITIES }),
      ...(metadata.imports ?? []),
    ],
    providers: metadata.providers ?? [],
  }).compile();
  const app = createHttpApp(moduleRef, adapter, { logger: ['error', 'warn'] });
  setup?.(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, baseUrl: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/**
 * Boots an app whose only module is McpClientModule on `options`, runs `use` with its client, and
 * closes the app whatever `use` did.
 */
export async function withClientApp<T>(
  databaseUrl: string,
  options: McpClientOptions,
  use: (client: McpClientService) => Promise<T>,
): Promise<T> {
  const app = await startApp(databaseUrl, { imports: [McpClientModule.forRoot(options)] });
  try {
    return await use(app.app.get(McpClientService));
  } finally {
    await app.close();
  }
}

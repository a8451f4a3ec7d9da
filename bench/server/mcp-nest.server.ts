/**
 * Target mcp-nest-2.x: `@rekog/mcp-nest` 2.x deployed the way its README shows. It has no
 * module to import: an `McpStrategy` with one `StreamableHttpTransport` (stateful sessions, JSON
 * responses) runs as a Nest microservice strategy on SDK 2.x, the `echo` tool is a `@Tool` on an
 * `@McpController`. The route is a bring-your-own controller (`McpHttpControllerFor`) so that a
 * Nest guard can check the bench token (BENCH_TOKEN), as its documentation does for an
 * authenticated server. Runs as its own process (PORT, HOST).
 */
import 'reflect-metadata';
import {
  Controller,
  Module,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Payload } from '@nestjs/microservices';
import { McpController, McpHttpControllerFor, McpStrategy, StreamableHttpTransport, Tool } from '@rekog/mcp-nest';
import { z } from 'zod';

const token = process.env.BENCH_TOKEN ?? '';

const transport = new StreamableHttpTransport({ statefulMode: true, enableJsonResponse: true });
const strategy = new McpStrategy({ name: 'mcp-nest-echo', version: '1.0.0', transports: [transport] });

/** Lets a request through only with `Authorization: Bearer <BENCH_TOKEN>`; anything else is 401. */
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>()
      .headers.authorization;
    if (!token || header !== `Bearer ${token}`) throw new UnauthorizedException('Invalid bearer token');
    return true;
  }
}

@McpController()
class EchoTools {
  @Tool({
    name: 'echo',
    description: 'Echoes the given text back.',
    parameters: z.object({ text: z.string().max(10_000) }),
  })
  echo(@Payload() { text }: { text: string }) {
    return { content: [{ type: 'text', text }] };
  }
}

@Controller('mcp')
@UseGuards(BearerGuard)
class McpHttpController extends McpHttpControllerFor(transport) {}

@Module({ controllers: [EchoTools, McpHttpController] })
class BenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(BenchModule, { logger: ['error', 'warn'] });
  strategy.setHttpAdapter(app.getHttpAdapter());
  app.connectMicroservice({ strategy });
  await app.startAllMicroservices();
  await app.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

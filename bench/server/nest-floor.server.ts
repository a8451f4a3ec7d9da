/**
 * Targets nest-floor and nest-fastify-floor: what a NestJS 11 app costs before any MCP library or
 * database. One controller POST route on `/mcp` behind a global guard that checks the bearer token
 * (BENCH_TOKEN); the route reads the JSON body Nest's own body parser made and answers just enough
 * MCP for the benchmark, like the node:http floor: `initialize` hands out a session id,
 * notifications get 202, `tools/call` of `echo` sends the text back. Express by default, Fastify
 * with `HTTP_ADAPTER=fastify`. Runs as its own process (PORT, HOST).
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import {
  Body,
  Controller,
  Headers,
  HttpCode,
  Module,
  Post,
  Res,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';

const token = process.env.BENCH_TOKEN ?? '';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the echo route reads whatever params the load sends
type Message = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, any> };

/** The reply object of either adapter, as far as this route uses it. */
interface Reply {
  status(code: number): Reply;
  code?(code: number): Reply;
  header(name: string, value: string): Reply;
  send(body?: unknown): unknown;
}

/** Lets a request through only with `Authorization: Bearer <BENCH_TOKEN>`; anything else is 401. */
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>()
      .headers.authorization;
    if (!token || header !== `Bearer ${token}`) throw new UnauthorizedException('Invalid bearer token');
    return true;
  }
}

@Controller('mcp')
class EchoController {
  @Post()
  @HttpCode(200)
  post(
    @Body() message: Message,
    @Headers('mcp-session-id') sessionId: string | undefined,
    @Res({ passthrough: true }) reply: Reply,
  ): unknown {
    if (message?.method === 'initialize') {
      reply.header('Mcp-Session-Id', randomBytes(16).toString('hex'));
      return {
        jsonrpc: '2.0',
        id: message.id,
        result: {
          protocolVersion: message.params?.protocolVersion ?? '2025-11-25',
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'nest-floor-echo', version: '1.0.0' },
        },
      };
    }
    if (!sessionId) {
      reply.status(400);
      return { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Mcp-Session-Id required' } };
    }
    if (message.id === undefined) {
      reply.status(202);
      return undefined;
    }
    if (message.method === 'tools/call' && message.params?.name === 'echo') {
      const text = String(message.params.arguments?.text ?? '');
      return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }] } };
    }
    return {
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32601, message: `Method not found: ${message.method}` },
    };
  }
}

@Module({ controllers: [EchoController], providers: [{ provide: APP_GUARD, useClass: BearerGuard }] })
class FloorModule {}

async function main(): Promise<void> {
  const logger = ['error', 'warn'] as const;
  const port = Number(process.env.PORT);
  const host = process.env.HOST || '127.0.0.1';
  if (process.env.HTTP_ADAPTER === 'fastify') {
    // Loaded only here so that the Express floor does not carry Fastify in its memory.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { FastifyAdapter } = require('@nestjs/platform-fastify') as typeof import('@nestjs/platform-fastify');
    const app = await NestFactory.create(FloorModule, new FastifyAdapter(), { logger: [...logger] });
    await app.listen(port, host);
    return;
  }
  const app = await NestFactory.create(FloorModule, { logger: [...logger] });
  await app.listen(port, host);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

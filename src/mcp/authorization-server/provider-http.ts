import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpAdapterHost } from '@nestjs/core';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';

/** A Node request whose `url` a router may have cut (Express keeps the whole one in `originalUrl`). */
export type RoutedRequest = IncomingMessage & { originalUrl?: string };

/** An OAuth error as JSON (RFC 6749 section 5.2), never a stack trace. */
export function sendError(res: ServerResponse, status: number, error: string, description: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ error, error_description: description }));
}

/** Sends the browser on (303: the next request is a GET whatever this one was). */
export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store' }).end();
}

/**
 * Serves `handle` on the app's HTTP server for `path` and below, and for the RFC 8414 well-known
 * path of the issuer (`/.well-known/oauth-authorization-server<path>`, answered as oidc-provider's
 * discovery document). `handle` gets the request with `url` relative to `path` and `originalUrl`
 * the whole one, as oidc-provider expects when mounted under a prefix. Nothing to do without an
 * HTTP adapter (an application context).
 * @throws McpConfigurationError on an adapter other than Express or Fastify
 */
export function serveOnHttpServer(
  adapterHost: HttpAdapterHost | undefined,
  path: string,
  handle: (req: RoutedRequest, res: ServerResponse) => void,
): void {
  const adapter = adapterHost?.httpAdapter;
  if (!adapter) return;
  const type = adapter.getType();
  const wellKnown = `/.well-known/oauth-authorization-server${path}`;
  const route = (req: RoutedRequest, res: ServerResponse, url: string): boolean => {
    const [pathname] = url.split('?');
    if (pathname === wellKnown) {
      req.originalUrl = `${path}/.well-known/openid-configuration`;
      req.url = '/.well-known/openid-configuration';
    } else if (pathname === path || pathname.startsWith(`${path}/`)) {
      req.originalUrl = url;
      req.url = url.slice(path.length) || '/';
    } else {
      return false;
    }
    handle(req, res);
    return true;
  };
  if (type === 'express') {
    const app = adapter.getInstance<{ use(handler: unknown): unknown; router?: { stack: unknown[] } }>();
    app.use((req: RoutedRequest, res: ServerResponse, next: () => void) => {
      if (!route(req, res, req.originalUrl ?? req.url ?? '/')) next();
    });
    // First in the stack, ahead of the body parsers: oidc-provider reads its requests' bodies itself.
    const stack = app.router?.stack;
    if (stack) stack.unshift(stack.pop());
  } else if (type === 'fastify') {
    const app = adapter.getInstance<{
      addHook(
        name: 'onRequest',
        hook: (
          request: { raw: IncomingMessage },
          reply: { raw: ServerResponse; hijack(): void },
          done: () => void,
        ) => void,
      ): unknown;
    }>();
    app.addHook('onRequest', (request, reply, done) => {
      const raw = request.raw;
      const [pathname] = (raw.url ?? '/').split('?');
      if (pathname !== wellKnown && pathname !== path && !pathname.startsWith(`${path}/`)) return done();
      // oidc-provider answers on the raw response and reads the raw body itself.
      reply.hijack();
      route(raw, reply.raw, raw.url ?? '/');
    });
  } else {
    throw new McpConfigurationError(
      `McpAuthorizationServerModule runs on the Express or Fastify adapter of Nest, not "${type}"`,
    );
  }
}

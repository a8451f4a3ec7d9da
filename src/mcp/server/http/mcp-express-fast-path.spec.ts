import { ExpressAdapter } from '@nestjs/platform-express';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import {
  MCP_EXPRESS_APP,
  hostRequestOf,
  planExpressFastPath,
  type ExpressAppLike,
  type ExpressLayerLike,
} from './mcp-express-fast-path';

const KEYS = ['/mcp'];
const handler = (_req: Request, res: Response) => void res.end();

function stackOf(app: Express): ExpressLayerLike[] {
  return (app as unknown as { router: { stack: ExpressLayerLike[] } }).router.stack;
}

/** The routes of a mount's controller, in the order Nest registers them. */
function mountRoutes(app: Express, path: string): void {
  app.post(path, handler);
  app.get(path, handler);
  app.delete(path, handler);
  app.all(path, handler);
}

/** An app as Nest builds it with the module: the body reader first, Nest's parsers, then the mount's routes. */
function nestLikeApp(before?: (app: Express) => void): Express {
  const app = express();
  app.use(function mcpBodyReader(_req: Request, _res: Response, next: NextFunction) {
    next();
  });
  before?.(app);
  app.use(express.json());
  app.use(express.urlencoded({ extended: true }));
  mountRoutes(app, '/mcp');
  return app;
}

describe('planExpressFastPath', () => {
  it('takes the POST route of the mount when only the reader and the body parsers come before it', () => {
    const app = nestLikeApp();
    const plan = planExpressFastPath(stackOf(app), KEYS, [], true);
    expect(plan.obstacle).toBeUndefined();
    expect(plan.route?.route?.path).toBe('/mcp');
    expect(plan.route?.route?.methods.post).toBe(true);
  });

  it('matches what Express routes to the mount: letter case and a trailing slash, not an escape or a sub-path', () => {
    const route = planExpressFastPath(stackOf(nestLikeApp()), KEYS, [], true).route!;
    expect(route.match('/mcp')).toBeTruthy();
    expect(route.match('/MCP')).toBeTruthy();
    expect(route.match('/mcp/')).toBeTruthy();
    expect(route.match('/m%63p')).toBeFalsy();
    expect(route.match('/mcp/x')).toBeFalsy();
    expect(route.match('/mcpx')).toBeFalsy();
  });

  it('finds the route under a global prefix', () => {
    const app = express();
    mountRoutes(app, '/api/mcp');
    expect(planExpressFastPath(stackOf(app), ['/mcp', '/api/mcp'], [], true).route?.route?.path).toBe('/api/mcp');
  });

  it('stays on the Nest route for a middleware on every path, naming it', () => {
    const app = nestLikeApp((host) =>
      host.use(function tagging(_req: Request, _res: Response, next: NextFunction) {
        next();
      }),
    );
    expect(planExpressFastPath(stackOf(app), KEYS, [], true)).toEqual({
      obstacle: 'the middleware tagging on its path',
    });
  });

  it('stays on the Nest route for a middleware mounted on a prefix of the path, or on the path itself', () => {
    for (const mount of ['/', '/mcp', '/MCP']) {
      const app = nestLikeApp((host) => host.use(mount, (_req: Request, _res: Response, next: NextFunction) => next()));
      expect(planExpressFastPath(stackOf(app), KEYS, [], true).obstacle).toBe('the middleware <anonymous> on its path');
    }
  });

  it('takes the fast path beside middleware of other paths, error handlers and static files', () => {
    const app = nestLikeApp((host) => {
      host.use('/other', (_req: Request, _res: Response, next: NextFunction) => next());
      host.use((_error: unknown, _req: Request, _res: Response, next: NextFunction) => next());
      host.use(express.static(__dirname));
    });
    expect(planExpressFastPath(stackOf(app), KEYS, [], true).route).toBeDefined();
  });

  it('stays on the Nest route for another route that takes the POSTs first, not for one of another method', () => {
    const getFirst = nestLikeApp((host) => host.get('/:anything', handler));
    expect(planExpressFastPath(stackOf(getFirst), KEYS, [], true).route).toBeDefined();
    const postFirst = nestLikeApp((host) => host.post('/:anything', handler));
    expect(planExpressFastPath(stackOf(postFirst), KEYS, [], true).obstacle).toBe(
      "the app's route /:anything ahead of it",
    );
    const allFirst = nestLikeApp((host) => host.all('/mcp', handler));
    expect(planExpressFastPath(stackOf(allFirst), KEYS, [], true).obstacle).toBe("the app's route /mcp ahead of it");
    const samePathFirst = nestLikeApp((host) => host.post('/mcp', handler));
    expect(planExpressFastPath(stackOf(samePathFirst), KEYS, [], true).obstacle).toBe(
      "the app's route /mcp ahead of it",
    );
  });

  it("stays on the Nest route for the app's global guards and interceptors, naming them", () => {
    expect(
      planExpressFastPath(stackOf(nestLikeApp()), KEYS, ['guard ThrottlerGuard', 'interceptor Audit'], true),
    ).toEqual({
      obstacle: "the app's global guard ThrottlerGuard, interceptor Audit",
    });
  });

  it('stays on the Nest route when the mount has no POST route at its path (a module prefix, URI versioning)', () => {
    const app = express();
    mountRoutes(app, '/v1/mcp');
    expect(planExpressFastPath(stackOf(app), KEYS, [], true).obstacle).toBe(
      "the mount's POST route is not in Express's router at its path",
    );
  });

  it("passes Nest's adapter middleware while the adapter has no hooks, and only then", () => {
    const adapter = new ExpressAdapter();
    const app = adapter.getInstance<Express>();
    mountRoutes(app, '/mcp');
    expect(planExpressFastPath(stackOf(app), KEYS, [], true).route).toBeDefined();
    expect(planExpressFastPath(stackOf(app), KEYS, [], false).obstacle).toBe('the middleware <anonymous> on its path');
  });
});

describe('hostRequestOf', () => {
  function nodeRequest(url: string, headers: Record<string, string>): IncomingMessage {
    const socket = new Socket();
    Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
    const req = new IncomingMessage(socket);
    req.method = 'POST';
    req.url = url;
    req.headers = headers;
    return req;
  }

  it('hands back a request the fast path did not take as it is', () => {
    const req = nodeRequest('/mcp', {});
    expect(hostRequestOf(req)).toBe(req);
  });

  it("gives a fast-path request Express's request helpers over the same headers, URL and socket", () => {
    const app = express();
    const req = nodeRequest('/mcp?tenant=acme', { 'x-client': 'probe', host: 'mcp.example' });
    (req as unknown as { [MCP_EXPRESS_APP]: ExpressAppLike })[MCP_EXPRESS_APP] = app as unknown as ExpressAppLike;
    const view = hostRequestOf(req) as unknown as Request;
    expect(view).not.toBe(req);
    expect(view.get('x-client')).toBe('probe');
    expect(view.ip).toBe('127.0.0.1');
    expect(view.query).toEqual({ tenant: 'acme' });
    expect(view.path).toBe('/mcp');
    expect(view.hostname).toBe('mcp.example');
    expect(view.headers).toBe(req.headers);
    expect(view.method).toBe('POST');
  });
});

import {
  Catch,
  Controller,
  Get,
  HttpException,
  Inject,
  Param,
  Query,
  Req,
  Res,
  UseFilters,
  UseGuards,
  type ArgumentsHost,
  type CanActivate,
  type ExceptionFilter,
  type Type,
} from '@nestjs/common';
import { consoleAssets } from './console-assets';
import {
  renderEventDetail,
  renderEvents,
  renderOverview,
  renderProblem,
  renderSessions,
  renderTasks,
  type ConsolePageName,
} from './console-html';
import { ConsoleQueryError, parseCursor, parseEventFilter, type QueryValue } from './console-query';
import { ConsoleScopeError, scopeOf } from './console-scope';
import { McpAuditQuery } from './mcp-audit-query.service';
import { MCP_CONSOLE_OPTIONS } from './mcp-console.constants';
import type { McpConsoleResolvedOptions, McpConsoleScope } from './mcp-console.options';
import { McpDatabaseUnavailableError } from '../errors/mcp-outage.errors';

/**
 * The Content-Security-Policy of every console response: scripts, styles and images from the
 * console's own origin only (the chart's bootstrap is a served file, its data a JSON island),
 * no frames, no plugins, forms only to itself.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The headers every console response carries. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** What Express's response and Fastify's reply both offer. */
interface ConsoleReply {
  status(code: number): ConsoleReply;
  header(name: string, value: string): ConsoleReply;
  send(body: string): unknown;
}

/** What Express's and Fastify's requests both offer. */
interface ConsoleRequest {
  url: string;
  originalUrl?: string;
}

type Query = Record<string, QueryValue>;

/** A row the page names does not exist (in the console's scope). */
class ConsoleNotFound extends Error {}

function send(res: object, status: number, contentType: string, body: string): void {
  let reply = (res as ConsoleReply).status(status).header('Content-Type', contentType);
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) reply = reply.header(name, value);
  reply.send(body);
}

function sendHtml(res: object, status: number, body: string): void {
  send(res, status, 'text/html; charset=utf-8', body);
}

/**
 * Answers the HTTP exceptions of the console's routes (a guard's 401 or 403 above all) as Nest
 * would, JSON with the exception's body, plus the console's security headers: a refusal is not
 * cached or sniffed either. Headers the guard set (`WWW-Authenticate`) stay.
 */
@Catch(HttpException)
export class McpConsoleExceptionFilter implements ExceptionFilter {
  /** @inheritdoc */
  catch(exception: HttpException, host: ArgumentsHost): void {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const json = typeof body === 'object' && body !== null ? body : { statusCode: status, message: String(body) };
    send(host.switchToHttp().getResponse<object>(), status, 'application/json; charset=utf-8', JSON.stringify(json));
  }
}

/**
 * The console's URL path as the browser sees it (the app's global prefix included), from the
 * request's path minus the route's own tail, so links work wherever the console is mounted.
 */
function baseOf(req: ConsoleRequest, tail: string): string {
  const path = (req.originalUrl ?? req.url).split('?')[0].replace(/\/+$/, '');
  return tail && path.endsWith(tail) ? path.slice(0, -tail.length) : path;
}

/**
 * Creates the console's controller at `path` behind `guards`: read-only pages (GET only), each
 * answered as server-rendered HTML with the console's security headers, and the assets the
 * pages load. Every query of a page is narrowed to the scope the `scope` option gives the
 * request. Written against what Express and Fastify share.
 */
export function createMcpConsoleController(path: string, guards: (Type<CanActivate> | CanActivate)[]): Type<unknown> {
  @Controller(path)
  @UseFilters(McpConsoleExceptionFilter)
  @UseGuards(...guards)
  class McpConsoleController {
    constructor(
      private readonly audit: McpAuditQuery,
      @Inject(MCP_CONSOLE_OPTIONS) private readonly options: McpConsoleResolvedOptions,
    ) {}

    @Get()
    async overview(@Req() req: ConsoleRequest, @Res() res: object): Promise<void> {
      const base = baseOf(req, '');
      await this.page(res, base, 'overview', async () => {
        const scope = await this.scope(req);
        const [chart, latest] = await Promise.all([
          this.audit.throughput(undefined, scope),
          this.audit.eventPage({}, null, scope),
        ]);
        return renderOverview(base, chart, latest.rows);
      });
    }

    @Get('sessions')
    async sessions(@Req() req: ConsoleRequest, @Query() query: Query, @Res() res: object): Promise<void> {
      const base = baseOf(req, '/sessions');
      await this.page(res, base, 'sessions', async () => {
        const before = parseCursor(query);
        return renderSessions(
          base,
          await this.audit.sessionPage(before, undefined, await this.scope(req)),
          before === null,
        );
      });
    }

    @Get('events')
    async events(@Req() req: ConsoleRequest, @Query() query: Query, @Res() res: object): Promise<void> {
      const base = baseOf(req, '/events');
      await this.page(res, base, 'events', async () => {
        const filter = parseEventFilter(query);
        const before = parseCursor(query);
        return renderEvents(
          base,
          await this.audit.eventPage(filter, before, await this.scope(req)),
          filter,
          before === null,
        );
      });
    }

    @Get('events/:id')
    async event(@Req() req: ConsoleRequest, @Param('id') id: string, @Res() res: object): Promise<void> {
      const base = baseOf(req, `/events/${encodeURIComponent(id)}`);
      await this.page(res, base, 'events', async () => {
        // Out of the reader's scope answers like an unknown id: the page does not tell that the row exists.
        const row = /^[A-Za-z0-9-]{1,64}$/.test(id) ? await this.audit.event(id, await this.scope(req)) : null;
        if (!row) throw new ConsoleNotFound(`No audit row with id ${id} here.`);
        return renderEventDetail(base, row);
      });
    }

    @Get('tasks')
    async tasks(@Req() req: ConsoleRequest, @Query() query: Query, @Res() res: object): Promise<void> {
      const base = baseOf(req, '/tasks');
      await this.page(res, base, 'tasks', async () => {
        const before = parseCursor(query);
        return renderTasks(base, await this.audit.taskPage(before, await this.scope(req)), before === null);
      });
    }

    @Get('assets/:name')
    asset(@Param('name') name: string, @Res() res: object): void {
      const asset = consoleAssets().get(name);
      if (!asset) return send(res, 404, 'text/plain; charset=utf-8', `No console asset named ${name}.`);
      send(res, 200, asset.contentType, asset.body);
    }

    /** What this request may see, from the `scope` option (every row without one). */
    private scope(req: ConsoleRequest): Promise<McpConsoleScope> {
      return scopeOf(this.options.scope, req);
    }

    /**
     * Renders a page. A query string it cannot use answers 400 with the reason, a missing row
     * (or one outside the reader's scope) 404, a `scope` option that returned something it cannot
     * apply 500, and a database that is away or too slow 503 with `Retry-After`; other errors go
     * to Nest's exception handling (500).
     */
    private async page(
      res: object,
      base: string,
      current: ConsolePageName,
      render: () => Promise<string>,
    ): Promise<void> {
      let html: string;
      try {
        html = await render();
      } catch (error) {
        if (error instanceof ConsoleQueryError)
          return sendHtml(res, 400, renderProblem(base, 'Bad request', error.message, current));
        if (error instanceof ConsoleNotFound)
          return sendHtml(res, 404, renderProblem(base, 'Not found', error.message, current));
        if (error instanceof ConsoleScopeError)
          return sendHtml(res, 500, renderProblem(base, 'Console misconfigured', error.message, current));
        if (error instanceof McpDatabaseUnavailableError) {
          (res as ConsoleReply).header('Retry-After', '5');
          return sendHtml(
            res,
            503,
            renderProblem(base, 'Database unavailable', `${error.message}. Try again in a moment.`, current),
          );
        }
        throw error;
      }
      sendHtml(res, 200, html);
    }
  }
  return McpConsoleController;
}

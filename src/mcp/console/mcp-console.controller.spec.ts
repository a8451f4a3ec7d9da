import { HttpException, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES } from '../persistence/entities';
import { McpEvent } from '../persistence/entities/mcp-event.entity';
import { McpConsoleModule } from './mcp-console.module';
import { CONSOLE_SECURITY_HEADERS } from './mcp-console.controller';
import { createHttpApp, type HttpAdapterName } from '../../../test/support/http-app';

/** Lets a request through unless it carries `x-refuse`: then a plain-text HttpException (a string body). */
const teapotGuard: CanActivate = {
  canActivate(context: ExecutionContext): boolean {
    const refuse = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers[
      'x-refuse'
    ];
    if (refuse) throw new HttpException(refuse, 418);
    return true;
  },
};

function expectSecurityHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) expect(headers[name.toLowerCase()]).toBe(value);
}

describe.each<HttpAdapterName>(['express', 'fastify'])('the console controller on %s', (adapter) => {
  let app: INestApplication;
  let server: ReturnType<INestApplication['getHttpServer']>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: MCP_ENTITIES,
          synchronize: true,
        }),
        McpConsoleModule.forRoot({ path: 'console', guard: teapotGuard }),
      ],
    }).compile();
    app = createHttpApp(moduleRef, adapter, { logger: false });
    await app.init();
    if (adapter === 'fastify') await (app.getHttpAdapter().getInstance() as { ready(): Promise<void> }).ready();
    server = app.getHttpServer();
    await app
      .get(DataSource)
      .getRepository(McpEvent)
      .insert({
        id: 'ev-1',
        createdAt: new Date(Date.UTC(2026, 0, 1)),
        direction: 'inbound',
        mount: 'default',
        server: null,
        kind: 'request',
        method: 'ping',
        durationMs: 4,
        isError: false,
      });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers a guard refusal with a plain-text body as JSON, with the security headers', async () => {
    const response = await request(server).get('/console').set('x-refuse', 'brewing');
    expect(response.status).toBe(418);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(response.text)).toEqual({ statusCode: 418, message: 'brewing' });
    expectSecurityHeaders(response.headers);
  });

  it('renders an event and links back to the console base, whatever the query string', async () => {
    const response = await request(server).get('/console/events/ev-1?x=1');
    expect(response.status).toBe(200);
    expect(response.text).toContain('<dt>Id</dt><dd>ev-1</dd>');
    expect(response.text).toContain('<a href="/console/events">← Events</a>');
    expectSecurityHeaders(response.headers);
  });

  it('answers 404 for an id it would never store, and for a valid id it does not have', async () => {
    const odd = await request(server).get('/console/events/not_valid!');
    expect(odd.status).toBe(404);
    expect(odd.text).toContain('No audit row with id not_valid! here.');
    const missing = await request(server).get('/console/events/ev-2');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('<a href="/console/events" aria-current="page">Events</a>');
  });

  it('answers 400 with the reason for a cursor it cannot read, on the sessions and tasks pages', async () => {
    for (const page of ['sessions', 'tasks', 'events']) {
      const response = await request(server).get(`/console/${page}?before=garbage`);
      expect(response.status).toBe(400);
      expect(response.text).toContain('<p class="problem">');
      expect(response.text).toContain(`<a href="/console/${page}" aria-current="page">`);
    }
  });

  it('serves the overview (at the trailing-slash path too on Express), and 404 for an unknown asset', async () => {
    // Fastify does not route a trailing slash to the bare path by default.
    const overview = await request(server).get(adapter === 'express' ? '/console/' : '/console');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('<link rel="stylesheet" href="/console/assets/console.css">');
    const asset = await request(server).get('/console/assets/nope.js');
    expect(asset.status).toBe(404);
    expect(asset.text).toBe('No console asset named nope.js.');
    expectSecurityHeaders(asset.headers);
    const css = await request(server).get('/console/assets/console.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });

  it('renders the sessions, tasks and filtered events pages with their tab marked', async () => {
    for (const [path, tab, text] of [
      ['/console/sessions', 'Sessions', 'No sessions.'],
      ['/console/tasks', 'Tasks', 'No tasks.'],
      ['/console/events?method=ping', 'Events', '<tr data-event="ev-1">'],
      ['/console/events?method=other', 'Events', 'No events match.'],
    ]) {
      const response = await request(server).get(path);
      expect(response.status).toBe(200);
      expect(response.text).toContain(`aria-current="page">${tab}</a>`);
      expect(response.text).toContain(text);
    }
  });

  it('answers 503 with Retry-After once the database is gone', async () => {
    await app.get(DataSource).destroy();
    const response = await request(server).get('/console/sessions');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.text).toContain('Try again in a moment.');
    expectSecurityHeaders(response.headers);
  });
});

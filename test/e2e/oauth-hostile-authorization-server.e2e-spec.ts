import { IntrospectionVerifier, McpModule } from '../../src/mcp';
import { FixtureTools } from '../fixtures/fixture-tools';
import { CapturingLogger } from '../support/capturing-logger';
import { startApp, type RunningApp } from '../support/http-app';
import { flood, json, measured, redirect, startHostile, type HostileServer } from '../support/hostile-http';
import { initializeRequest, post } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const ISSUER = 'https://as.example';
const AUDIENCE = 'https://mcp.example/mcp';
const TIMEOUT_MS = 1500;
const MAX_BYTES = 65_536;
const DEADLINE_MS = TIMEOUT_MS * 3 + 2000;

describe('a mount whose authorization server answers 1 GiB or a redirect (PostgreSQL, express)', () => {
  let db: TestDatabase;
  let hostile: HostileServer;
  let sink: HostileServer;
  let server: RunningApp;
  let url: string;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    db = await createTestDatabase();
    [hostile, sink] = await Promise.all([startHostile(), startHostile()]);
    const Verifier = IntrospectionVerifier.configure({
      clientId: 'resource-server',
      clientSecret: 'resource-secret',
      endpoint: `${hostile.origin}/introspect`,
      issuer: ISSUER,
      audience: AUDIENCE,
      timeoutMs: TIMEOUT_MS,
      maxResponseBytes: MAX_BYTES,
      inactiveCacheTtlMs: 0,
    });
    server = await startApp(
      db.url,
      { imports: [McpModule.forRoot({ auth: Verifier, providers: [FixtureTools] })], providers: [FixtureTools] },
      'express',
      (app) => app.useLogger(logger),
    );
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all([hostile, sink].map((peer) => peer?.close()));
    await db?.drop();
  });

  it('answers 503 with Retry-After within the deadline, reading no more than the bound, logs why, and keeps serving', async () => {
    hostile.routes['POST /introspect'] = flood(hostile, 1024 ** 3, false);
    const token = 'opaque-token-for-the-flood';
    const outcome = await measured(() => post(url, initializeRequest(), { token }));
    expect(outcome.error).toBeUndefined();
    expect(outcome.value?.status).toBe(503);
    expect(outcome.value?.headers.get('retry-after')).toBe('1');
    expect(outcome.value?.text).not.toContain(token);
    expect(outcome.ms).toBeLessThan(DEADLINE_MS);
    expect(outcome.peakGrowth).toBeLessThan(MAX_BYTES + 48 * 1024 ** 2);
    await hostile.floodsDone();
    expect(hostile.written).toBeLessThan(MAX_BYTES + 32 * 1024 ** 2);
    expect(
      logger.lines.some((line) =>
        line.includes(
          `The authorization server at ${hostile.origin}/introspect answered a body larger than maxResponseBytes (${MAX_BYTES} bytes)`,
        ),
      ),
    ).toBe(true);

    // The same process answers the next request on its merits once the server behaves.
    hostile.routes['POST /introspect'] = json({ active: false });
    expect((await post(url, initializeRequest(), { token })).status).toBe(401);
  });

  it('answers 503 to a redirect from the introspection endpoint, the token goes nowhere else, and the log says why', async () => {
    hostile.routes['POST /introspect'] = redirect(307, `${sink.origin}/introspect`);
    const reply = await post(url, initializeRequest(), { token: 'opaque-token-for-the-redirect' });
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(sink.hits).toEqual([]);
    expect(
      logger.lines.some((line) =>
        line.includes(`answered a redirect (HTTP 307 to ${sink.origin}/introspect); redirects are not followed`),
      ),
    ).toBe(true);
  });
});

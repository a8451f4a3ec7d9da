import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { IntrospectionVerifier, McpModule } from '../../src/mcp';
import { FixtureTools } from '../fixtures/fixture-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { initializeRequest, post } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const ISSUER = 'https://as.example';
const AUDIENCE = 'https://mcp.example/mcp';
const INACTIVE_TTL_MS = 10_000;
const INACTIVE_MAX = 20;

/** A loopback RFC 7662 endpoint that counts its calls, knows a set of active tokens, and can hold its answers. */
interface Introspector {
  url: string;
  calls: number;
  active: Set<string>;
  /** Holds every answer until `release`. */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function startIntrospector(): Promise<Introspector> {
  let held: (() => void)[] | null = null;
  const state = { calls: 0, active: new Set<string>() };
  const answer = (token: string, res: ServerResponse) => {
    const body = state.active.has(token)
      ? {
          active: true,
          iss: ISSUER,
          aud: AUDIENCE,
          sub: 'svc',
          client_id: 'svc',
          scope: 'mcp:tools',
          exp: Math.floor(Date.now() / 1000) + 300,
        }
      : { active: false };
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      state.calls++;
      const token = new URLSearchParams(text).get('token') ?? '';
      if (held) held.push(() => answer(token, res));
      else answer(token, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/introspect`,
    get calls() {
      return state.calls;
    },
    set calls(value: number) {
      state.calls = value;
    },
    active: state.active,
    hold: () => (held = []),
    release: () => {
      const waiting = held ?? [];
      held = null;
      for (const send of waiting) send();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const randomToken = () => `opaque-${randomBytes(16).toString('hex')}`;

describe.each(HTTP_ADAPTERS)(
  'IntrospectionVerifier against a loopback endpoint that counts calls (PostgreSQL, %s)',
  (adapter) => {
    let db: TestDatabase;
    let introspector: Introspector;
    let server: RunningApp;
    let url: string;
    /** Calls of `authorize`, so a test knows every request of a burst reached the verifier. */
    let entered = 0;
    /** The mount's verifier, as its last call saw it. */
    let verifier: IntrospectionVerifier | undefined;

    beforeAll(async () => {
      db = await createTestDatabase();
      introspector = await startIntrospector();
      const Configured = IntrospectionVerifier.configure({
        clientId: 'resource-server',
        clientSecret: 'resource-secret',
        endpoint: introspector.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        inactiveCacheTtlMs: INACTIVE_TTL_MS,
        inactiveCacheMaxEntries: INACTIVE_MAX,
      });
      @Injectable()
      class CountingVerifier extends Configured {
        override authorize(token: string) {
          entered++;
          // eslint-disable-next-line @typescript-eslint/no-this-alias -- keeps the instance Nest built, for the assertions
          verifier = this;
          return super.authorize(token);
        }
      }
      server = await startApp(
        db.url,
        {
          imports: [McpModule.forRoot({ auth: CountingVerifier, providers: [FixtureTools] })],
          providers: [FixtureTools],
        },
        adapter,
      );
      url = `${server.baseUrl}/mcp`;
    });

    afterAll(async () => {
      await server?.close();
      await introspector?.close();
      await db?.drop();
    });

    afterEach(() => {
      jest.restoreAllMocks();
    });

    /** Sends `count` initialize requests with `token` at once, holding the endpoint's answer until all reached the verifier. */
    async function burst(token: string, count: number): Promise<number[]> {
      introspector.hold();
      const before = entered;
      const replies = Array.from({ length: count }, () => post(url, initializeRequest(), { token }));
      try {
        await pollUntil(`${count} requests to reach the verifier`, () =>
          entered - before >= count ? true : undefined,
        );
      } finally {
        introspector.release();
      }
      return (await Promise.all(replies)).map((reply) => reply.status);
    }

    it('eight concurrent requests with one unknown token make one introspection call, and all get 401', async () => {
      const calls = introspector.calls;
      expect(await burst(randomToken(), 8)).toEqual(new Array(8).fill(401));
      expect(introspector.calls - calls).toBe(1);
    });

    it('eight concurrent requests with one active token make one introspection call, and all are served', async () => {
      const token = randomToken();
      introspector.active.add(token);
      const calls = introspector.calls;
      expect(await burst(token, 8)).toEqual(new Array(8).fill(200));
      expect(introspector.calls - calls).toBe(1);
    });

    it('an unknown token sent again within inactiveCacheTtlMs costs no new call; once it passed, one', async () => {
      const token = randomToken();
      const calls = introspector.calls;
      for (let i = 0; i < 5; i++) expect((await post(url, initializeRequest(), { token })).status).toBe(401);
      expect(introspector.calls - calls).toBe(1);
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + INACTIVE_TTL_MS + 1);
      expect((await post(url, initializeRequest(), { token })).status).toBe(401);
      expect(introspector.calls - calls).toBe(2);
    });

    it(`a flood of distinct random tokens keeps the last ${INACTIVE_MAX} refusals only, and cannot push out an active answer`, async () => {
      const good = randomToken();
      introspector.active.add(good);
      expect((await post(url, initializeRequest(), { token: good })).status).toBe(200);
      const flood = Array.from({ length: INACTIVE_MAX * 3 }, randomToken);
      for (const token of flood) expect((await post(url, initializeRequest(), { token })).status).toBe(401);

      let calls = introspector.calls;
      for (const token of flood.slice(-INACTIVE_MAX))
        expect((await post(url, initializeRequest(), { token })).status).toBe(401);
      expect(introspector.calls - calls).toBe(0); // the last ones are kept...
      expect((await post(url, initializeRequest(), { token: flood[0] })).status).toBe(401);
      expect(introspector.calls - calls).toBe(1); // ...the first one is gone: the cache stayed at its bound

      calls = introspector.calls;
      expect((await post(url, initializeRequest(), { token: good })).status).toBe(200);
      expect(introspector.calls - calls).toBe(0);

      // The caches are keyed by a digest: no token is held by the verifier.
      const held = inspect(verifier, { depth: 6, maxArrayLength: null });
      expect(held).toContain('TokenAnswerCache');
      for (const token of [good, ...flood]) expect(held).not.toContain(token);
    });
  },
);

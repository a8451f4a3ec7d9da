import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { McpModule } from '../../src/mcp';
import { FeaturePrompts, FeatureResources } from '../fixtures/features/feature-providers';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { envelope, routingHeaders, STATELESS, statelessPost } from '../fixtures/stateless/stateless-wire';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, callRequest, openSession, post, TEST_PROTOCOL_VERSION, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { CORPUS_BODY_TIMEOUT_MS, badInputCorpus, type BadInputCase } from './bad-input-corpus';

/** What one exchange of the corpus got back. */
interface Answer {
  status: number;
  text: string;
}

/** True for a 2025 case sent with the live session's id. */
function onLiveSession(item: BadInputCase): boolean {
  return item.revision === '2025' && item.headers?.['Mcp-Session-Id'] === undefined;
}

/** The longest any case may take to be answered; a case past it is a hang. */
const ANSWER_DEADLINE_MS = 20_000;

function withEnvelope(body: unknown): unknown {
  if (
    !body ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    typeof (body as { method?: unknown }).method !== 'string'
  )
    return body;
  const message = body as { params?: Record<string, unknown> };
  const params = message.params ?? {};
  return {
    ...message,
    params: { ...params, _meta: { ...envelope(), ...((params._meta as Record<string, unknown>) ?? {}) } },
  };
}

function encode(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

/** Header values go out as Latin-1 bytes, so a case can send any byte a client could. */
function latin1(value: string | string[]): string | string[] {
  const one = (text: string) => Buffer.from(text, 'latin1').toString('latin1');
  return Array.isArray(value) ? value.map(one) : one(value);
}

/**
 * Sends one case over a fresh connection (node:http, so duplicated headers and raw bytes go out
 * as written). Rejects when the connection drops or nothing comes back before the deadline.
 */
function send(
  url: URL,
  headers: OutgoingHttpHeaders,
  body: Buffer,
  trickle?: BadInputCase['trickle'],
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const deadline = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${ANSWER_DEADLINE_MS} ms`));
    }, ANSWER_DEADLINE_MS);
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (error) => {
          clearTimeout(deadline);
          reject(new Error(`the answer was cut off: ${error.message}`));
        });
      },
    );
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error) => {
      // A server that answers, then closes while the rest of a trickled body is still going out, has answered.
      if (answered) return;
      clearTimeout(deadline);
      reject(new Error(`the connection dropped without an answer: ${error.message}`));
    });
    if (!trickle) {
      req.end(body);
      return;
    }
    let offset = 0;
    const next = () => {
      if (answered || req.destroyed) return;
      if (offset >= body.length) return void req.end();
      req.write(body.subarray(offset, offset + trickle.bytes));
      offset += trickle.bytes;
      setTimeout(next, trickle.pauseMs);
    };
    req.flushHeaders();
    next();
  });
}

describe.each(HTTP_ADAPTERS)('bad-input corpus against a real app on PostgreSQL (both revisions, %s)', (adapter) => {
  const corpus = badInputCorpus();
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  let sessionId: string;
  let sessionRef: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [McpModule.forRoot({ auth: fixtureAuth, advanced: { bodyTimeoutMs: CORPUS_BODY_TIMEOUT_MS } })],
        providers: [FixtureTools, FeatureResources, FeaturePrompts],
      },
      adapter,
    );
    url = `${server.baseUrl}/mcp`;
    ({ sessionId } = await openSession(url));
    const [row] = await db.dataSource.query(`SELECT id FROM mcp_inbound_sessions WHERE session_id = $1`, [sessionId]);
    sessionRef = row.id;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function rowCount(): Promise<number> {
    const [row] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events`);
    return row.n;
  }

  function headersFor(item: BadInputCase, body: unknown): OutgoingHttpHeaders {
    const base: Record<string, string | string[] | null> = {
      Authorization: 'Bearer token-alice',
      'Content-Type': 'application/json',
      Accept: MCP_ACCEPT,
    };
    if (item.revision === '2025')
      Object.assign(base, { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': TEST_PROTOCOL_VERSION });
    else if (
      !item.noRouting &&
      body &&
      typeof body === 'object' &&
      typeof (body as { method?: unknown }).method === 'string'
    )
      Object.assign(base, routingHeaders(body as { method: string }));
    else base['MCP-Protocol-Version'] = STATELESS;
    for (const [name, value] of Object.entries(item.headers ?? {})) {
      for (const key of Object.keys(base)) if (key.toLowerCase() === name.toLowerCase()) delete base[key];
      if (value !== null)
        base[name] = Array.isArray(value)
          ? value.map((v) => v.replace('$SESSION', sessionId))
          : value.replace('$SESSION', sessionId);
    }
    return Object.fromEntries(
      Object.entries(base)
        .filter((entry): entry is [string, string | string[]] => entry[1] !== null)
        .map(([name, value]) => [name, latin1(value)]),
    );
  }

  // The README promises "more than 300 hostile requests"; the corpus holds exactly these, so a
  // case lost (or added without counting it here) shows.
  it('holds 304 requests: 167 on the 2025 revision and 137 on 2026-07-28', () => {
    expect(corpus.length).toBe(304);
    expect(corpus.filter((item) => item.revision === '2025').length).toBe(167);
    expect(corpus.filter((item) => item.revision === '2026').length).toBe(137);
    expect(new Set(corpus.map((item) => `${item.revision} ${item.name}`)).size).toBe(corpus.length);
  });

  describe.each(corpus.map((item) => [`${item.revision} ${item.name}`, item] as const))('%s', (_label, item) => {
    const title =
      'gets its answer (a 4xx, a JSON-RPC error, 202, or the success legal input deserves), never a 5xx, a hang or a drop, and leaves its row';
    it(title, async () => {
      const body = item.revision === '2026' && !item.bare ? withEnvelope(item.body) : item.body;
      const before = await rowCount();
      const beforeSession = await db.dataSource.query(
        `SELECT count(*)::int AS n FROM mcp_events WHERE session_ref = $1`,
        [sessionRef],
      );
      const sentAt = Date.now();
      const answer = await send(
        new URL(`${url}${item.query ?? ''}`),
        headersFor(item, body),
        encode(body),
        item.trickle,
      );
      // A body that trickles past bodyTimeoutMs is cut off by that deadline: within three times it
      // plus 2 s of the moment the request started, however long the trickle would have gone on.
      if (item.expect.status === 408)
        expect(Date.now() - sentAt).toBeLessThanOrEqual(CORPUS_BODY_TIMEOUT_MS * 3 + 2_000);
      let json: { error?: { code?: unknown }; result?: { isError?: unknown } } | undefined;
      try {
        json = answer.text ? JSON.parse(answer.text) : undefined;
      } catch {
        json = undefined;
      }
      expect(answer.status).toBeLessThan(500);
      const result = json && 'result' in json ? (json.result?.isError === true ? 'isError' : true) : undefined;
      expect({ status: answer.status, code: json?.error?.code ?? null, result }).toEqual({
        status: item.expect.status,
        code: item.expect.code,
        result: item.expect.result,
      });
      if (item.expect.status === 202) expect(answer.text).toBe('');
      expect((await rowCount()) - before).toBe(item.rows);
      if (onLiveSession(item)) {
        // The rows of requests on the live session carry its reference.
        const [afterSession] = await db.dataSource.query(
          `SELECT count(*)::int AS n FROM mcp_events WHERE session_ref = $1`,
          [sessionRef],
        );
        expect(afterSession.n - beforeSession[0].n).toBe(item.rows);
      }
    });
  });

  // Declared after the corpus so that they run after it.
  describe('after the corpus', () => {
    it('still serves a normal call on the live session and on the stateless revision afterwards', async () => {
      const onSession = await post(url, callRequest('after-1', 'echo', { text: 'alive' }), {
        sessionId,
        headers: versionHeader(),
      });
      expect({ status: onSession.status, content: onSession.json?.result?.content }).toEqual({
        status: 200,
        content: [{ type: 'text', text: 'alive' }],
      });
      const call = {
        jsonrpc: '2.0',
        id: 'after-2',
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'alive' }, _meta: envelope() },
      };
      const stateless = await statelessPost(url, call);
      expect({ status: stateless.status, content: stateless.json?.result?.content }).toEqual({
        status: 200,
        content: [{ type: 'text', text: 'alive' }],
      });
    });

    it('left exactly one row per corpus request that reached the live session (plus the handshake and the call above)', async () => {
      const expected = corpus.filter((item) => onLiveSession(item)).reduce((sum, item) => sum + item.rows, 0);
      // 155 cases go to the live session; 98 of them leave a row.
      expect(corpus.filter((item) => onLiveSession(item))).toHaveLength(155);
      expect(expected).toBe(98);
      const [row] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events WHERE session_ref = $1`, [
        sessionRef,
      ]);
      expect(row.n).toBe(2 + expected + 1);
    });
  });
});

/**
 * Target (a): the floor. A bare node:http server that speaks just enough MCP for the benchmark:
 * `initialize` hands out a session id, notifications get 202, `tools/call` of `echo` sends the
 * text back. No validation, no session store, no logging. Runs as its own process (PORT, HOST).
 *
 * With `DATABASE_URL` (targets bare-pg and bare-pg-async) each answer also waits for its row in
 * the package's `mcp_events` table (created by its migrations at start-up): one INSERT of one row
 * per request, a prepared statement with one parameter per column, committed on its own
 * (synchronously; with `AUDIT_COMMIT=async`, `synchronous_commit` off for its transaction). No
 * framework, no batching: at one connection this is the least time any server can answer in when
 * it commits a row before it answers, the bound of the c=1 goals.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the echo server reads whatever params the load sends
type Message = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, any> };

/** The row writer of bare-pg: one INSERT per row, committed before the answer is sent. */
let rows:
  ((message: Message, sessionId: string | undefined, status: number, text: string | null) => Promise<void>) | null =
  null;

async function startRows(url: string): Promise<void> {
  // Loaded from the built package (the bench builds it first): only its migrations, never its code paths.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { MCP_MIGRATIONS } = require(join(process.cwd(), 'dist', 'mcp', 'persistence', 'migrations')) as {
    MCP_MIGRATIONS: NonNullable<ConstructorParameters<typeof DataSource>[0]['migrations']>;
  };
  const schema = new DataSource({ type: 'postgres', url, migrations: MCP_MIGRATIONS });
  await schema.initialize();
  await schema.runMigrations();
  await schema.destroy();
  const pool = new Pool({ connectionString: url, max: 32 });
  const asyncCommit = process.env.AUDIT_COMMIT === 'async';
  const statement = {
    name: 'bare_insert',
    text:
      'INSERT INTO mcp_events (id, created_at, direction, mount, session_ref, principal_key, kind, method, ' +
      'protocol_version, request, response, status, duration_ms) SELECT $1::varchar, $2::timestamp, ' +
      `'inbound', '/mcp', $3::varchar, 'bench', $4::varchar, $5::varchar, '2025-11-25', $6::jsonb, $7::jsonb, ` +
      '$8::integer, 0' +
      (asyncCommit ? ` WHERE (SELECT set_config('synchronous_commit', 'off', true)) = 'off'` : ''),
  };
  rows = async (message, sessionId, status, text) => {
    const kind = message.id === undefined ? 'notification' : 'request';
    const values = [randomUUID(), new Date(), sessionId ?? null, kind, message.method ?? null];
    await pool.query({ ...statement, values: [...values, JSON.stringify(message), text, status] });
  };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  message?: Message,
  sessionId?: string,
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  const send = () => {
    const length = String(Buffer.byteLength(text));
    res.writeHead(
      status,
      text ? { 'Content-Type': 'application/json', 'Content-Length': length, ...headers } : headers,
    );
    res.end(text);
  };
  if (!rows || !message) return send();
  rows(message, sessionId, status, text || null).then(send, (error: Error) => {
    res.writeHead(500).end(error.message);
  });
}

function handle(message: Message, sessionId: string | undefined, res: ServerResponse): void {
  if (message.method === 'initialize') {
    const result = {
      protocolVersion: message.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'bare-echo', version: '1.0.0' },
    };
    return sendJson(
      res,
      200,
      { jsonrpc: '2.0', id: message.id, result },
      { 'Mcp-Session-Id': randomBytes(16).toString('hex') },
      message,
    );
  }
  if (!sessionId)
    return sendJson(res, 400, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Mcp-Session-Id required' },
    });
  if (message.id === undefined) return sendJson(res, 202, undefined, {}, message, sessionId);
  if (message.method === 'tools/call' && message.params?.name === 'echo') {
    const result = { content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] };
    return sendJson(res, 200, { jsonrpc: '2.0', id: message.id, result }, {}, message, sessionId);
  }
  sendJson(
    res,
    200,
    { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } },
    {},
    message,
    sessionId,
  );
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let message: Message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    const sessionId = req.headers['mcp-session-id'];
    handle(message, Array.isArray(sessionId) ? sessionId[0] : sessionId, res);
  });
});

(process.env.DATABASE_URL ? startRows(process.env.DATABASE_URL) : Promise.resolve()).then(
  () => server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1'),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

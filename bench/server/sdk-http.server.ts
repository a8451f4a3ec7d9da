/**
 * Target sdk-1.x: the official SDK 1.x, deployed the way its documentation shows for a stateful
 * server: the SDK's own `createMcpExpressApp()` (Express with its JSON parser and localhost
 * DNS-rebinding protection), the SDK's `requireBearerAuth` middleware checking the bench token
 * (BENCH_TOKEN), one McpServer + StreamableHTTPServerTransport per session (`sessionIdGenerator`
 * set, JSON responses), sessions kept in memory, the same `echo` tool. Set BENCH_SDK_BARE=1 to
 * put plain node:http in front instead (no token check then). Runs as its own process.
 */
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';

const transports = new Map<string, StreamableHTTPServerTransport>();

function createEchoServer(): McpServer {
  const server = new McpServer({ name: 'sdk-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text back.', inputSchema: { text: z.string().max(10_000) } },
    async ({ text }) => ({ content: [{ type: 'text' as const, text }] }),
  );
  return server;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('error', reject);
    req.once('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined);
      } catch (error) {
        reject(error);
      }
    });
  });
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

async function handle(req: IncomingMessage, res: ServerResponse, parsed?: { body: unknown }): Promise<void> {
  if (!parsed && req.url !== '/mcp') return sendError(res, 404, -32000, 'Not found');
  let body: unknown = parsed?.body;
  if (!parsed && req.method === 'POST') {
    try {
      body = await readJson(req);
    } catch {
      return sendError(res, 400, -32700, 'Parse error');
    }
  }
  const header = req.headers['mcp-session-id'];
  const sessionId = Array.isArray(header) ? header[0] : header;
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    if (sessionId) return sendError(res, 404, -32001, 'Session not found');
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return sendError(res, 400, -32000, 'Bad Request: no valid session id');
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void transports.set(id, created),
    });
    created.onclose = () => {
      if (created.sessionId) transports.delete(created.sessionId);
    };
    await createEchoServer().connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res, body);
}

function onError(res: ServerResponse) {
  return (error: unknown) => {
    if (!res.headersSent) sendError(res, 500, -32603, `Internal error: ${(error as Error)?.message ?? String(error)}`);
    else res.destroy();
  };
}

const host = process.env.HOST || '127.0.0.1';
if (process.env.BENCH_SDK_BARE === '1') {
  createServer((req, res) => void handle(req, res).catch(onError(res))).listen(Number(process.env.PORT), host);
} else {
  const app = createMcpExpressApp({ host });
  const token = process.env.BENCH_TOKEN ?? '';
  const verifier = {
    verifyAccessToken: async (presented: string) => {
      if (!token || presented !== token) throw new InvalidTokenError('Invalid token');
      return { token: presented, clientId: 'bench', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    },
  };
  app.all(
    '/mcp',
    requireBearerAuth({ verifier }),
    (req, res) => void handle(req, res, { body: (req as { body?: unknown }).body }).catch(onError(res)),
  );
  app.listen(Number(process.env.PORT), host);
}

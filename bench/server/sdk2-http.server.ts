/**
 * Target sdk-2.x: the official SDK 2.x, deployed the way its packages document a stateful server:
 * `createMcpExpressApp()` of `@modelcontextprotocol/express` (Express with its JSON parser and
 * localhost DNS-rebinding protection), its `requireBearerAuth` middleware checking the bench token
 * (BENCH_TOKEN), and one `McpServer` (`@modelcontextprotocol/server`) connected to one
 * `NodeStreamableHTTPServerTransport` (`@modelcontextprotocol/node`) per session
 * (`sessionIdGenerator` set, JSON responses), sessions kept in memory, the same `echo` tool.
 * Runs as its own process (PORT, HOST).
 */
import { createMcpExpressApp, requireBearerAuth } from '@modelcontextprotocol/express';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, McpServer, OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

const transports = new Map<string, NodeStreamableHTTPServerTransport>();

function createEchoServer(): McpServer {
  const server = new McpServer({ name: 'sdk2-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text back.', inputSchema: z.object({ text: z.string().max(10_000) }) },
    async ({ text }) => ({ content: [{ type: 'text' as const, text }] }),
  );
  return server;
}

type JsonResponse = { headersSent: boolean; status(code: number): { json(body: unknown): void }; destroy(): void };

function sendError(res: JsonResponse, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
}

const host = process.env.HOST || '127.0.0.1';
const token = process.env.BENCH_TOKEN ?? '';
const verifier = {
  verifyAccessToken: async (presented: string) => {
    if (!token || presented !== token) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token');
    return { token: presented, clientId: 'bench', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
  },
};

const app = createMcpExpressApp({ host });
app.all('/mcp', requireBearerAuth({ verifier }), async (req, res) => {
  try {
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) return sendError(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(req.body))
        return sendError(res, 400, -32000, 'Bad Request: no valid session id');
      const created = new NodeStreamableHTTPServerTransport({
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
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    if (!res.headersSent) sendError(res, 500, -32603, `Internal error: ${(error as Error)?.message ?? String(error)}`);
    else res.destroy();
  }
});
app.listen(Number(process.env.PORT), host);

/**
 * Target (a): the floor. A bare node:http server that speaks just enough MCP for the benchmark:
 * `initialize` hands out a session id, notifications get 202, `tools/call` of `echo` sends the
 * text back. No validation, no session store, no logging. Runs as its own process (PORT, HOST).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the echo server reads whatever params the load sends
type Message = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, any> };

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
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
    );
  }
  if (!sessionId)
    return sendJson(res, 400, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Mcp-Session-Id required' },
    });
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  if (message.method === 'tools/call' && message.params?.name === 'echo') {
    const result = { content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] };
    return sendJson(res, 200, { jsonrpc: '2.0', id: message.id, result });
  }
  sendJson(res, 200, {
    jsonrpc: '2.0',
    id: message.id,
    error: { code: -32601, message: `Method not found: ${message.method}` },
  });
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

server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');

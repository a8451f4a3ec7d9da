import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonRpcNotification } from '../../src/mcp/protocol';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import type {
  McpTransportContext,
  McpTransportDeliverOptions,
} from '../../src/mcp/client/transports/mcp-transport.interface';

/**
 * The standalone GET stream of a session against a hand-driven server: a GET refused with 409
 * while another stream closes is tried again, events that are not messages are skipped, and a
 * server request sent there during a call is answered by the call's handler.
 */
describe('HttpTransport standalone stream edges', () => {
  let http: Server;
  let url: string;
  let conflicts: number;
  const gets: number[] = [];
  let standalone: ServerResponse | null = null;
  const posted: Array<Record<string, unknown>> = [];
  let onAnswer: ((body: Record<string, unknown>) => void) | null = null;

  async function body(req: IncomingMessage): Promise<Record<string, unknown> | null> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? (JSON.parse(text) as Record<string, unknown>) : null;
  }

  beforeEach(async () => {
    conflicts = 2;
    gets.length = 0;
    posted.length = 0;
    standalone = null;
    http = createServer((req, res) => {
      void (async () => {
        if (req.method === 'GET') {
          gets.push(gets.length + 1);
          if (conflicts-- > 0)
            return void res.writeHead(409, { 'Content-Type': 'text/plain' }).end('another stream is open');
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          res.flushHeaders();
          standalone = res;
          return;
        }
        const message = await body(req);
        if (!message) return void res.writeHead(400).end();
        posted.push(message);
        if (message.method === undefined) {
          res.writeHead(202).end();
          onAnswer?.(message);
          return;
        }
        if (!standalone)
          return void res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }));
        // tools/call: ask on the standalone stream, answer the POST once the client replied.
        const stream = standalone;
        stream.write('event: heartbeat\ndata: {}\n\n');
        stream.write('event: message\ndata: \n\n');
        stream.write('event: message\ndata: {not json\n\n');
        stream.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'on the side' } })}\n\n`,
        );
        stream.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'side-1', method: 'roots/list' })}\n\n`,
        );
        onAnswer = (reply) => {
          onAnswer = null;
          res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(
              JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [], structuredContent: { reply } } }),
            );
        };
      })();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });

  afterEach(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it('tries a GET refused with 409 again, skips what is not a message, and answers a server request of the call there', async () => {
    const transport = new HttpTransport({ url, retry: { retries: 0 } });
    const notes: JsonRpcNotification[] = [];
    const context: McpTransportContext = {
      server: 'side',
      scopeKey: '',
      timeoutMs: 10_000,
      onNotification: (n) => notes.push(n),
      onServerRequest: async (request) => ({ roots: [{ uri: `file:///for-${request.method}` }] }),
    };
    const options: McpTransportDeliverOptions = { sessionId: 'sess-1', protocolVersion: '2025-11-25', context };
    const outcome = await transport.deliver(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
      options,
    );
    expect(gets).toHaveLength(3);
    expect(outcome.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [],
        structuredContent: {
          reply: { jsonrpc: '2.0', id: 'side-1', result: { roots: [{ uri: 'file:///for-roots/list' }] } },
        },
      },
    });
    expect(notes).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'on the side' } },
    ]);
  });

  it('gives up on the stream after repeated 409s and still makes the call', async () => {
    conflicts = 100;
    const transport = new HttpTransport({ url, retry: { retries: 0 } });
    const call = transport.deliver(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        sessionId: 'sess-1',
        protocolVersion: '2025-11-25',
        context: { server: 'side', scopeKey: '', timeoutMs: 10_000 },
      },
    );
    await expect(call).resolves.toMatchObject({ body: { id: 2, result: { tools: [] } } });
    expect(gets).toHaveLength(4);
  });
});

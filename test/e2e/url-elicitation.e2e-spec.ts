import { Client as Sdk2Client, StreamableHTTPClientTransport as Sdk2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { McpClientModule, McpClientService, McpElicitationNotifier, McpModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import {
  COMPLETION_RECEIPTS,
  CHECKOUT,
  CONNECT_URL,
  UrlElicitationTools,
} from '../fixtures/elicitation/url-elicitation-tools';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The JSON-RPC message of a reply that is either JSON or an SSE stream ending with the response. */
function lastMessage(text: string, contentType: string | null): Record<string, unknown> {
  if (!contentType?.startsWith('text/event-stream')) return JSON.parse(text);
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter(Boolean);
  return JSON.parse(data[data.length - 1]);
}

function textOf(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0].text;
}

/**
 * URL mode elicitation (SEP-1036) on both revisions: `ctx.elicit({ mode: 'url' })` reaches the
 * official SDK clients and our own, it is refused when the client did not declare URL mode, a
 * handler's `McpUrlElicitationRequiredError` becomes -32042 (2025-11-25) or `input_required`
 * (2026-07-28), and `McpElicitationNotifier` sends `notifications/elicitation/complete`.
 */
describe('URL mode elicitation (PostgreSQL, official SDK clients and McpClientService)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  const clients: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
        }),
      ],
      providers: [UrlElicitationTools],
    });
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await server?.close();
    await db?.drop();
  });

  async function sdk1(
    capabilities: Record<string, unknown>,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'url-elicitation-e2e', version: '1.0.0' }, { capabilities });
    clients.push(client);
    await client.connect(transport);
    return { client, transport };
  }

  describe('2025-11-25 with the SDK 1.x client', () => {
    it('round trip: the handler gets mode url, the URL and the id; the tool gets the answer; the app completes and the client is notified', async () => {
      const { client, transport } = await sdk1({ elicitation: { form: {}, url: {} } });
      const asked: Record<string, unknown>[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return { action: 'accept' };
      });
      const completed: string[] = [];
      let notified!: () => void;
      const arrived = new Promise<void>((resolve) => (notified = resolve));
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
        completed.push(notification.params.elicitationId);
        notified();
      });

      const result = await client.callTool({ name: 'connect_account', arguments: {} });
      const returned = JSON.parse(textOf(result));
      expect(returned.elicitationId).toMatch(UUID);
      expect(returned).toEqual({
        action: 'accept',
        elicitationId: returned.elicitationId,
        sessionId: transport.sessionId,
      });
      expect(asked).toEqual([
        { mode: 'url', message: 'Connect your account', url: CONNECT_URL, elicitationId: returned.elicitationId },
      ]);

      // The completion comes later, from the app (e.g. the OAuth callback route), on the GET stream.
      const sessionId = transport.sessionId as string;
      await pollUntil('the GET stream of the session', () =>
        server.app.get(McpStreamRegistry, { strict: false }).has(sessionId) ? true : undefined,
      );
      expect(await server.app.get(McpElicitationNotifier).complete(sessionId, returned.elicitationId)).toBe(true);
      await arrived;
      expect(completed).toEqual([returned.elicitationId]);
    });

    it('is refused when the client declared only form mode: the tool catches McpUnsupportedElicitationModeError', async () => {
      const { client } = await sdk1({ elicitation: { form: {} } });
      let asked = 0;
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked++;
        return { action: 'accept', content: {} };
      });
      const result = await client.callTool({ name: 'try_url_elicitation', arguments: {} });
      expect(textOf(result)).toBe(
        'refused (McpUnsupportedElicitationModeError, mode url): The client did not declare URL mode elicitation (capabilities.elicitation.url) that this elicitation/create needs',
      );
      expect(asked).toBe(0);
    });

    it('is refused when the client declared elicitation as an empty object (form mode only)', async () => {
      const { client } = await sdk1({ elicitation: {} });
      const result = await client.callTool({ name: 'try_url_elicitation', arguments: {} });
      expect(textOf(result)).toBe(
        'refused (McpUnsupportedElicitationModeError, mode url): The client did not declare URL mode elicitation (capabilities.elicitation.url) that this elicitation/create needs',
      );
    });

    it('McpUrlElicitationRequiredError is answered as JSON-RPC error -32042 with the elicitations', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(7, 'checkout'), { sessionId, headers: versionHeader() });
      expect(reply.status).toBe(200);
      expect(lastMessage(reply.text, reply.headers.get('content-type'))).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32042,
          message: 'This request requires more information: a URL elicitation must be completed first',
          data: {
            elicitations: [
              {
                mode: 'url',
                elicitationId: 'checkout-7',
                url: 'https://pay.example.test/checkout?e=checkout-7',
                message: 'Pay 5 EUR to unlock the report',
              },
            ],
          },
        },
      });
    });

    it('the SDK client reads it as its UrlElicitationRequiredError', async () => {
      const { client } = await sdk1({ elicitation: { url: {} } });
      const failure = await client.callTool({ name: 'checkout', arguments: {} }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(UrlElicitationRequiredError);
      expect((failure as UrlElicitationRequiredError).elicitations).toEqual([{ mode: 'url', ...CHECKOUT }]);
    });
  });

  describe('2026-07-28', () => {
    it('round trip with the SDK 2.x client: the URL elicitation travels as an input request, without an id on the wire', async () => {
      const transport = new Sdk2Transport(new URL(url), {
        requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      });
      const client = new Sdk2Client(
        { name: 'url-elicitation-e2e', version: '2.0.0' },
        { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      clients.push(client);
      const asked: Record<string, unknown>[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params);
        return { action: 'accept' };
      });
      await client.connect(transport);
      const result = await client.callTool({ name: 'connect_account', arguments: {} });
      const returned = JSON.parse(textOf(result));
      expect(returned.elicitationId).toMatch(UUID);
      expect(returned).toEqual({ action: 'accept', elicitationId: returned.elicitationId, sessionId: null });
      expect(asked).toEqual([{ mode: 'url', message: 'Connect your account', url: CONNECT_URL }]);
    });

    it('is refused when the request declared only form mode', async () => {
      const body = statelessRequest(
        1,
        'tools/call',
        { name: 'try_url_elicitation', arguments: {} },
        { elicitation: { form: {} } },
      );
      const reply = await statelessPost(url, body);
      expect(reply.status).toBe(200);
      expect(reply.json.result.content).toEqual([
        {
          type: 'text',
          text: 'refused (McpUnsupportedElicitationModeError, mode url): The client did not declare URL mode elicitation (capabilities.elicitation.url) that this elicitation/create needs',
        },
      ]);
    });

    it('McpUrlElicitationRequiredError becomes input_required keyed by the elicitation id; the retry completes once the checkout is done', async () => {
      const capabilities = { elicitation: { url: {} } };
      const first = await statelessPost(
        url,
        statelessRequest(1, 'tools/call', { name: 'checkout', arguments: {} }, capabilities),
      );
      expect(first.status).toBe(200);
      expect(first.json.error).toBeUndefined();
      const { requestState, ...rest } = first.json.result;
      expect(typeof requestState).toBe('string');
      expect(rest).toEqual({
        resultType: 'input_required',
        inputRequests: {
          'checkout-7': {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              message: 'Pay 5 EUR to unlock the report',
              url: 'https://pay.example.test/checkout?e=checkout-7',
            },
          },
        },
        _meta: { 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
      });

      // Retried before the user paid: asked again.
      const retry = {
        name: 'checkout',
        arguments: {},
        inputResponses: { 'checkout-7': { action: 'accept' } },
        requestState,
      };
      const early = await statelessPost(url, statelessRequest(2, 'tools/call', retry, capabilities));
      expect(early.json.result.resultType).toBe('input_required');
      expect(Object.keys(early.json.result.inputRequests)).toEqual(['checkout-7']);

      server.app.get(UrlElicitationTools).paid.add('alice');
      try {
        const done = await statelessPost(
          url,
          statelessRequest(3, 'tools/call', { ...retry, requestState: early.json.result.requestState }, capabilities),
        );
        expect(done.json.result.resultType).toBe('complete');
        expect(done.json.result.content).toEqual([{ type: 'text', text: 'report for alice' }]);
      } finally {
        server.app.get(UrlElicitationTools).paid.delete('alice');
      }
    });

    it('McpUrlElicitationRequiredError to a request without URL mode is the missing-capability error', async () => {
      const reply = await statelessPost(
        url,
        statelessRequest(4, 'tools/call', { name: 'checkout', arguments: {} }, { elicitation: {} }),
      );
      expect(reply.json).toEqual({
        jsonrpc: '2.0',
        id: 4,
        error: {
          code: -32021,
          message:
            'The client did not declare URL mode elicitation (capabilities.elicitation.url) that this elicitation/create needs',
          data: { requiredCapabilities: { elicitation: { url: {} } } },
        },
      });
    });

    it('McpElicitationNotifier sends nothing for a request without a session', async () => {
      expect(await server.app.get(McpElicitationNotifier).complete(null, 'any-id')).toBe(false);
    });
  });

  describe('McpClientService with a urlElicitation handler, against this server', () => {
    let client: RunningApp;
    const asked: Array<{ server: string; params: Record<string, unknown> }> = [];
    const completed: Array<{ server: string; elicitationId: string }> = [];

    beforeAll(async () => {
      client = await startApp(db.url, {
        imports: [
          McpClientModule.forRoot({
            servers: {
              legacy: { url, bearerToken: 'token-alice', version: '2025-11-25' },
              stateless: { url, bearerToken: 'token-alice' },
            },
            handlers: {
              urlElicitation: (params, context) => {
                asked.push({ server: context.server, params });
                return { action: 'accept' };
              },
              elicitationComplete: ({ elicitationId }, { server: name }) => {
                completed.push({ server: name, elicitationId });
                COMPLETION_RECEIPTS.received(elicitationId);
              },
            },
          }),
        ],
      });
    });

    afterAll(async () => {
      await client?.close();
    });

    it('declares URL mode only, answers URL elicitations, and hears the completion (2025-11-25)', async () => {
      const mcp = client.app.get(McpClientService);
      const result = await mcp.callTool('legacy', 'connect_and_wait', {});
      expect(result.content).toEqual([{ type: 'text', text: 'accept given-id completion sent: true' }]);
      expect(asked).toEqual([
        {
          server: 'legacy',
          params: {
            mode: 'url',
            message: 'Connect your account',
            url: `${CONNECT_URL}?e=given-id`,
            elicitationId: 'given-id',
          },
        },
      ]);
      expect(completed).toEqual([{ server: 'legacy', elicitationId: 'given-id' }]);
      const [session] = await db.dataSource.query(
        `SELECT client_capabilities FROM mcp_inbound_sessions ORDER BY created_at DESC LIMIT 1`,
      );
      expect(session.client_capabilities).toEqual({ elicitation: { url: {} } });
    });

    it('answers URL elicitations through input_required rounds (2026-07-28)', async () => {
      asked.length = 0;
      const mcp = client.app.get(McpClientService);
      const result = await mcp.callTool('stateless', 'connect_account', {});
      const returned = JSON.parse((result.content[0] as { text: string }).text);
      expect(returned).toEqual({ action: 'accept', elicitationId: expect.stringMatching(UUID), sessionId: null });
      expect(asked).toEqual([
        { server: 'stateless', params: { mode: 'url', message: 'Connect your account', url: CONNECT_URL } },
      ]);
    });
  });
});

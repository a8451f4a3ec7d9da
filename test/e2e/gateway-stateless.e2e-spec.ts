import { McpClientModule, McpClientService, McpGatewayModule, McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startStatelessHttpPeer, type StatelessHttpPeer } from '../fixtures/stateless-peers/stateless-http-server';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JavaScript module the stateless peers share
const { TRICKY_STATE } = require('../fixtures/stateless-peers/stateless-peer-tools') as { TRICKY_STATE: string };

/** The client capabilities of a 2026-07-28 caller that answers forms. */
const ELICIT = { elicitation: { form: {} } };

/** The JSON a mount's sealed requestState carries (the part before its MAC). */
function unsealed(requestState: string): { kept?: Record<string, string> } {
  return JSON.parse(Buffer.from(requestState.split('.')[0], 'base64url').toString('utf8')) as {
    kept?: Record<string, string>;
  };
}

/**
 * A 2026-07-28 caller of the gateway in front of an official SDK 2.x 2026-07-28 upstream: the
 * upstream's own `input_required` reaches the caller as such (its requests under keys of the
 * gateway, its `requestState` sealed inside the mount's own), and the caller's retry sends the
 * upstream its answer with its state untouched, so the upstream tool runs twice (asks, then
 * answers) and never from the start again.
 */
describe('McpGatewayModule: a 2026-07-28 upstream input_required passed through to a 2026-07-28 caller', () => {
  let db: TestDatabase;
  let peer: StatelessHttpPeer;
  let app: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    peer = await startStatelessHttpPeer({ legacy: 'reject' });
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-gateway-stateless-suite' },
        }),
        McpClientModule.forRoot({ servers: { peer: { url: peer.url, version: '2026-07-28' } } }),
        McpGatewayModule.forRoot({
          upstreams: [{ server: 'peer', prefix: 'peer_', serve: ['tools'] }],
          refreshIntervalMs: 0,
        }),
      ],
    });
    url = `${app.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await app?.close();
    await peer?.close().catch(() => undefined);
    await db?.drop();
  });

  const askRuns = () => peer.runs.filter((run) => run === 'ask').length;
  const upstreamCalls = () =>
    peer.received.map((received) => received.body).filter((body) => body?.method === 'tools/call');

  it("answers the caller the upstream's input_required, and its retry completes the upstream's own round", async () => {
    const runsBefore = askRuns();
    const first = await statelessPost(
      url,
      statelessRequest(1, 'tools/call', { name: 'peer_ask', arguments: {} }, ELICIT),
      { token: 'token-alice' },
    );
    expect(first.status).toBe(200);
    const result = first.json.result;
    expect(result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        'upstream-1-who': {
          method: 'elicitation/create',
          params: expect.objectContaining({ message: 'Your name?' }),
        },
      },
      requestState: expect.any(String),
    });
    // The upstream's state travels sealed inside the mount's own.
    const kept = JSON.parse(unsealed(result.requestState).kept?.['gateway.upstream'] ?? '{}') as { state?: string };
    expect(kept.state).toBe(TRICKY_STATE);

    const answer = { action: 'accept', content: { name: 'Ada' } };
    const done = await statelessPost(
      url,
      statelessRequest(
        2,
        'tools/call',
        {
          name: 'peer_ask',
          arguments: {},
          inputResponses: { 'upstream-1-who': answer },
          requestState: result.requestState,
        },
        ELICIT,
      ),
      { token: 'token-alice' },
    );
    expect(done.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });
    // Two runs of the upstream tool: it asked, then it answered. The retry carried its own key
    // and its requestState byte for byte.
    expect(askRuns() - runsBefore).toBe(2);
    expect(upstreamCalls().at(-1)?.params).toMatchObject({
      name: 'ask',
      inputResponses: { who: answer },
      requestState: TRICKY_STATE,
    });
  });

  it('asks again when the retry lacks the answer, keeping the upstream state', async () => {
    const first = await statelessPost(
      url,
      statelessRequest(3, 'tools/call', { name: 'peer_ask', arguments: {} }, ELICIT),
      { token: 'token-alice' },
    );
    const callsBefore = upstreamCalls().length;
    const again = await statelessPost(
      url,
      statelessRequest(
        4,
        'tools/call',
        { name: 'peer_ask', arguments: {}, inputResponses: {}, requestState: first.json.result.requestState },
        ELICIT,
      ),
      { token: 'token-alice' },
    );
    expect(again.json.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'upstream-1-who': expect.any(Object) },
    });
    expect(upstreamCalls().length).toBe(callsBefore);
    expect(unsealed(again.json.result.requestState).kept?.['gateway.upstream']).toContain('state:');
  });

  it('serves a durable-mcp 2026-07-28 client whose handler answers the upstream through the gateway', async () => {
    const asked: string[] = [];
    const downstream = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { gateway: { url, bearerToken: 'token-alice', version: '2026-07-28' } },
          handlers: {
            elicitation: (params) => {
              asked.push(String(params.message));
              return { action: 'accept', content: { name: 'Grace' } };
            },
          },
        }),
      ],
    });
    try {
      const runsBefore = askRuns();
      const result = await downstream.app.get(McpClientService).callTool('gateway', 'peer_ask', {});
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Grace!' }]);
      expect(asked).toEqual(['Your name?']);
      expect(askRuns() - runsBefore).toBe(2);
    } finally {
      await downstream.close();
    }
  });

  it("answers a tool error when the caller's client cannot answer the upstream's request", async () => {
    const reply = await statelessPost(url, statelessRequest(5, 'tools/call', { name: 'peer_ask', arguments: {} }, {}), {
      token: 'token-alice',
    });
    expect(reply.json.result).toMatchObject({ isError: true });
    expect(reply.json.result.content).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(/^The upstream server "peer" could not run ask: .*"elicitation" capability/),
      },
    ]);
  });

  it('retries an upstream round that asks nothing at once, and gives up with a tool error after ten', async () => {
    const nagsBefore = peer.runs.filter((run) => run === 'nag').length;
    const reply = await statelessPost(
      url,
      statelessRequest(6, 'tools/call', { name: 'peer_nag', arguments: {} }, ELICIT),
      { token: 'token-alice' },
    );
    expect(reply.json.result).toMatchObject({
      isError: true,
      content: [
        { type: 'text', text: 'The upstream server "peer" could not run nag: it still required input after 10 rounds' },
      ],
    });
    // The first call and ten retries, each carrying the upstream's state back.
    expect(peer.runs.filter((run) => run === 'nag').length - nagsBefore).toBe(11);
    expect(upstreamCalls().at(-1)?.params).toMatchObject({ name: 'nag', requestState: 'again' });
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpModule } from '../../src/mcp';
import type { McpResolvedOptions } from '../../src/mcp/server/config/mcp.options';
import { RequestStateCodec, digestParams } from '../../src/mcp/server/stateless/request-state-codec';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { KeyedInputTools } from '../fixtures/stateless/keyed-input-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const SECRET = 'mrtr-suite-secret-0123456789';
const ELICIT = { elicitation: {} };

/**
 * Multi round-trip requests on the wire: the `input_required` result, the retry that completes
 * it, and every way a `requestState` must be refused (tampered, another principal, another
 * request, expired, malformed retry fields).
 */
describe('Stateless multi round-trip requests (input_required) on the wire', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, stateless: { requestStateSecret: SECRET } })],
      providers: [StatelessTools, KeyedInputTools],
    });
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function firstRound(id: number, token = 'token-alice') {
    const reply = await statelessPost(
      url,
      statelessRequest(id, 'tools/call', { name: 'greet', arguments: {} }, ELICIT),
      { token },
    );
    expect(reply.status).toBe(200);
    return reply.json.result;
  }

  function retry(id: number, requestState: unknown, inputResponses: unknown, extra: Record<string, unknown> = {}) {
    return statelessRequest(
      id,
      'tools/call',
      { name: 'greet', arguments: {}, ...extra, inputResponses, requestState },
      ELICIT,
    );
  }

  it('answers input_required with one keyed elicitation and a sealed state, then completes on retry', async () => {
    const result = await firstRound(1);
    expect(result).toEqual({
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': {
          method: 'elicitation/create',
          params: expect.objectContaining({ message: 'What is your name?', mode: 'form' }),
        },
      },
      requestState: expect.any(String),
      _meta: expect.any(Object),
    });
    expect(result.ttlMs).toBeUndefined();
    const done = await statelessPost(
      url,
      retry(2, result.requestState, { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } }),
    );
    expect(done.status).toBe(200);
    expect(done.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });
  });

  it('asks again when the retry lacks the answer, and ignores answers it never asked for', async () => {
    const result = await firstRound(3);
    const again = await statelessPost(
      url,
      retry(4, result.requestState, { unrelated: { action: 'accept', content: {} } }),
    );
    expect(again.json.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': expect.any(Object) },
    });
  });

  it('without the elicitation capability the tool gets -32021 / 400', async () => {
    const reply = await statelessPost(url, statelessRequest(5, 'tools/call', { name: 'greet' }, {}));
    expect({ status: reply.status, code: reply.json.error.code, data: reply.json.error.data }).toEqual({
      status: 400,
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
  });

  it.each([
    ['a tampered state', (state: string) => `${state}-TAMPERED`, 'token-alice', {}],
    ['a state altered inside its payload', (state: string) => `x${state.slice(1)}`, 'token-alice', {}],
    ['a state presented by another principal', (state: string) => state, 'token-bob', {}],
    [
      'a state presented on a request with other params',
      (state: string) => state,
      'token-alice',
      { arguments: { other: true } },
    ],
  ])('refuses %s with -32602', async (_case, alter, token, extra) => {
    const result = await firstRound(6);
    const body = retry(
      7,
      alter(result.requestState),
      { 'elicitation-1': { action: 'accept', content: { name: 'Eve' } } },
      extra,
    );
    const reply = await statelessPost(url, body, { token });
    expect({ status: reply.status, code: reply.json.error?.code }).toEqual({ status: 200, code: -32602 });
  });

  it('refuses an expired state with -32602', async () => {
    const codec = new RequestStateCodec({
      mount: 'default',
      stateless: { requestStateSecret: SECRET },
    } as McpResolvedOptions);
    const params = { name: 'greet', arguments: {} };
    const expired = codec.seal({
      principal: 'alice',
      method: 'tools/call',
      digest: digestParams(params),
      expiresAt: Date.now() - 1,
      responses: {},
      asked: ['elicitation-1'],
    });
    const reply = await statelessPost(
      url,
      retry(8, expired, { 'elicitation-1': { action: 'accept', content: { name: 'Old' } } }),
    );
    expect(reply.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
  });

  it.each([
    ['inputResponses that is not an object', null, undefined],
    ['an answer that is not an ElicitResult', { 'elicitation-1': 12345 }, 'state'],
    ['a requestState that is not a string', {}, 42],
  ])('refuses %s with -32602', async (_case, inputResponses, requestState) => {
    const result = await firstRound(9);
    const state = requestState === 'state' ? result.requestState : requestState;
    const reply = await statelessPost(url, retry(10, state, inputResponses));
    expect(reply.json.error?.code).toBe(-32602);
  });

  it('never answers input_required on other methods (tools/list stays complete)', async () => {
    const reply = await statelessPost(url, statelessRequest(11, 'tools/list', {}, ELICIT));
    expect(reply.json.result.resultType).toBe('complete');
  });

  describe('input requests a handler names (key)', () => {
    const ALL = { elicitation: {}, sampling: {}, roots: {} };
    const NAME = { action: 'accept', content: { name: 'Ada' } };
    const MODEL = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    const ROOTS = { roots: [{ uri: 'file:///work' }] };
    const keyed = (id: number, extra: Record<string, unknown> = {}) =>
      statelessRequest(id, 'tools/call', { name: 'keyed', arguments: {}, ...extra }, ALL);

    it('asks under the names the handler chose, numbering only the unnamed request, across rounds', async () => {
      const first = (await statelessPost(url, keyed(20))).json.result;
      expect(first).toMatchObject({
        resultType: 'input_required',
        inputRequests: {
          user_name: {
            method: 'elicitation/create',
            params: expect.objectContaining({ message: 'What is your name?' }),
          },
        },
      });
      expect(Object.keys(first.inputRequests)).toEqual(['user_name']);
      expect(first.inputRequests.user_name.params.key).toBeUndefined();
      const second = (
        await statelessPost(url, keyed(21, { inputResponses: { user_name: NAME }, requestState: first.requestState }))
      ).json.result;
      expect(Object.keys(second.inputRequests)).toEqual(['model_reply']);
      const third = (
        await statelessPost(
          url,
          keyed(22, { inputResponses: { model_reply: MODEL }, requestState: second.requestState }),
        )
      ).json.result;
      expect(third.inputRequests).toEqual({ workspace: { method: 'roots/list', params: {} } });
      const fourth = (
        await statelessPost(url, keyed(23, { inputResponses: { workspace: ROOTS }, requestState: third.requestState }))
      ).json.result;
      expect(Object.keys(fourth.inputRequests)).toEqual(['elicitation-1']);
      const done = await statelessPost(
        url,
        keyed(24, { inputResponses: { 'elicitation-1': { action: 'decline' } }, requestState: fourth.requestState }),
      );
      expect(done.json.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Ada / hi / file:///work / decline' }],
      });
    });

    it('completes at once on answers sent without a requestState, ignoring keys it never asks for', async () => {
      const inputResponses = {
        user_name: NAME,
        model_reply: MODEL,
        workspace: ROOTS,
        'elicitation-1': { action: 'cancel' },
        unknown_extra_key: 12345,
      };
      const reply = await statelessPost(url, keyed(25, { inputResponses }));
      expect(reply.json.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Ada / hi / file:///work / cancel' }],
      });
    });

    it('refuses an answer under a named key that is not a result of its method (-32602)', async () => {
      const unanswered = await statelessPost(url, keyed(26, { inputResponses: { user_name: 12345 } }));
      expect(unanswered.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('user_name') });
      const first = (await statelessPost(url, keyed(27))).json.result;
      const reply = await statelessPost(
        url,
        keyed(28, { inputResponses: { user_name: { content: {} } }, requestState: first.requestState }),
      );
      expect(reply.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('ElicitResult') });
    });

    it('ignores the key on a 2025 session: the elicitation is an ordinary server->client request', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      });
      const client = new Client({ name: 'mrtr-keyed', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      const asked: Record<string, unknown>[] = [];
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return { action: 'accept', content: { name: 'Grace' } };
      });
      await client.connect(transport);
      try {
        const result = await client.callTool({ name: 'named_greet', arguments: {} });
        expect(result.content).toEqual([{ type: 'text', text: 'Hello, Grace!' }]);
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({ message: 'What is your name?' });
        expect(asked[0].key).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  });
});

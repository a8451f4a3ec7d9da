import { McpModule } from '../../src/mcp';
import type { McpResolvedOptions } from '../../src/mcp/mcp.options';
import { RequestStateCodec, digestParams } from '../../src/mcp/server/modern/request-state.codec';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { modernPost, modernRequest } from '../fixtures/modern/modern-wire';
import { ModernTools } from '../fixtures/modern/modern-tools';
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
      providers: [ModernTools],
    });
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function firstRound(id: number, token = 'token-alice') {
    const reply = await modernPost(url, modernRequest(id, 'tools/call', { name: 'greet', arguments: {} }, ELICIT), { token });
    expect(reply.status).toBe(200);
    return reply.json.result;
  }

  function retry(id: number, requestState: unknown, inputResponses: unknown, extra: Record<string, unknown> = {}) {
    return modernRequest(id, 'tools/call', { name: 'greet', arguments: {}, ...extra, inputResponses, requestState }, ELICIT);
  }

  it('answers input_required with one keyed elicitation and a sealed state, then completes on retry', async () => {
    const result = await firstRound(1);
    expect(result).toEqual({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': { method: 'elicitation/create', params: expect.objectContaining({ message: 'What is your name?', mode: 'form' }) } },
      requestState: expect.any(String),
      _meta: expect.any(Object),
    });
    expect(result.ttlMs).toBeUndefined();
    const done = await modernPost(url, retry(2, result.requestState, { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } }));
    expect(done.status).toBe(200);
    expect(done.json.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it('asks again when the retry lacks the answer, and ignores answers it never asked for', async () => {
    const result = await firstRound(3);
    const again = await modernPost(url, retry(4, result.requestState, { unrelated: { action: 'accept', content: {} } }));
    expect(again.json.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'elicitation-1': expect.any(Object) } });
  });

  it('without the elicitation capability the tool gets -32021 / 400', async () => {
    const reply = await modernPost(url, modernRequest(5, 'tools/call', { name: 'greet' }, {}));
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
    ['a state presented on a request with other params', (state: string) => state, 'token-alice', { arguments: { other: true } }],
  ])('refuses %s with -32602', async (_case, alter, token, extra) => {
    const result = await firstRound(6);
    const body = retry(7, alter(result.requestState), { 'elicitation-1': { action: 'accept', content: { name: 'Eve' } } }, extra);
    const reply = await modernPost(url, body, { token });
    expect({ status: reply.status, code: reply.json.error?.code }).toEqual({ status: 200, code: -32602 });
  });

  it('refuses an expired state with -32602', async () => {
    const codec = new RequestStateCodec({ mount: 'default', stateless: { requestStateSecret: SECRET } } as McpResolvedOptions);
    const params = { name: 'greet', arguments: {} };
    const expired = codec.seal({ principal: 'alice', method: 'tools/call', digest: digestParams(params), expiresAt: Date.now() - 1, responses: {}, asked: ['elicitation-1'] });
    const reply = await modernPost(url, retry(8, expired, { 'elicitation-1': { action: 'accept', content: { name: 'Old' } } }));
    expect(reply.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
  });

  it.each([
    ['inputResponses that is not an object', null, undefined],
    ['an answer that is not an ElicitResult', { 'elicitation-1': 12345 }, 'state'],
    ['a requestState that is not a string', {}, 42],
  ])('refuses %s with -32602', async (_case, inputResponses, requestState) => {
    const result = await firstRound(9);
    const state = requestState === 'state' ? result.requestState : requestState;
    const reply = await modernPost(url, retry(10, state, inputResponses));
    expect(reply.json.error?.code).toBe(-32602);
  });

  it('never answers input_required on other methods (tools/list stays complete)', async () => {
    const reply = await modernPost(url, modernRequest(11, 'tools/list', {}, ELICIT));
    expect(reply.json.result.resultType).toBe('complete');
  });
});

import { Injectable } from '@nestjs/common';
import { McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { McpRequestEndedError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** What the background work of `fire_and_forget` saw once the response had ended. */
class LateCalls {
  static go: () => void;
  static outcome: Promise<Record<string, unknown>>;

  static arm(): void {
    let resolve!: () => void;
    const gate = new Promise<void>((r) => (resolve = r));
    LateCalls.go = resolve;
    LateCalls.outcome = new Promise((done) => (LateCalls.settleWith = done));
    LateCalls.gate = gate;
  }

  static gate: Promise<void>;
  static settleWith: (outcome: Record<string, unknown>) => void;
}

async function settled(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
    return 'resolved';
  } catch (error) {
    return error;
  }
}

@Injectable()
class FireAndForgetTools {
  @McpTool({ description: 'Returns at once and keeps using its context in the background' })
  fire_and_forget(_input: unknown, ctx: McpToolContext): string {
    void LateCalls.gate.then(async () => {
      LateCalls.settleWith({
        log: await settled(() => ctx.log('info', 'late')),
        progress: await settled(() => ctx.progress(1, 2)),
        elicit: await settled(() => ctx.elicit('late?', { type: 'object', properties: {} })),
        sample: await settled(() => ctx.sample({ messages: [], maxTokens: 1 })),
        listRoots: await settled(() => ctx.listRoots()),
      });
    });
    return 'started';
  }
}

/**
 * A tool that fires and forgets: its context outlives the response. Every way back to the
 * client then rejects with `McpRequestEndedError` for the caller to handle, and nothing in the
 * module rejects unhandled.
 */
describe('handler context after the response has ended', () => {
  let db: TestDatabase;
  let app: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [FireAndForgetTools] })],
      providers: [FireAndForgetTools],
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('ctx.log, progress, elicit, sample and listRoots reject with McpRequestEndedError (2025 session, SSE accepted)', async () => {
    LateCalls.arm();
    const init = await post(`${app.baseUrl}/mcp`, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {}, sampling: {}, roots: {} },
        clientInfo: { name: 'late', version: '1' },
      },
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    const request = callRequest(7, 'fire_and_forget');
    (request.params as Record<string, unknown>)._meta = { progressToken: 'p' };
    const reply = await post(`${app.baseUrl}/mcp`, request, { sessionId, headers: versionHeader() });
    expect(reply.status).toBe(200);
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'started' }]);

    LateCalls.go();
    const outcome = await LateCalls.outcome;
    for (const operation of ['log', 'progress', 'elicit', 'sample', 'listRoots']) {
      const error = outcome[operation];
      expect(error).toBeInstanceOf(McpRequestEndedError);
      expect((error as McpRequestEndedError).operation).toBe(operation);
      expect((error as McpRequestEndedError).requestId).toBe(7);
    }
  });

  it('the same on a 2026-07-28 stateless request', async () => {
    LateCalls.arm();
    const reply = await post(
      `${app.baseUrl}/mcp`,
      {
        jsonrpc: '2.0',
        id: 'stateless-1',
        method: 'tools/call',
        params: {
          name: 'fire_and_forget',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
          },
        },
      },
      { headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'fire_and_forget' } },
    );
    expect(reply.status).toBe(200);
    LateCalls.go();
    const outcome = await LateCalls.outcome;
    expect(Object.values(outcome).every((error) => error instanceof McpRequestEndedError)).toBe(true);
    expect(Object.keys(outcome)).toHaveLength(5);
  });
});

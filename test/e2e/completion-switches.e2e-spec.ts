import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable } from '@nestjs/common';
import {
  McpModule,
  McpPrompt,
  McpRegistry,
  McpResourceTemplate,
  type McpCompletionContext,
  type McpResourceRequest,
} from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Who each completer ran for, in order: a refused completion must leave no trace here. */
const ran: string[] = [];

@Injectable()
class Deployments {
  @McpPrompt({
    name: 'deploy',
    description: 'Deploys to an environment',
    arguments: [{ name: 'env', description: 'Where to', required: true }],
    complete: {
      env: (value: string, context: McpCompletionContext) => {
        ran.push(`env for ${context.principal.key}`);
        return ['production', 'preview'].filter((env) => env.startsWith(value));
      },
    },
  })
  deploy({ env }: { env: string }) {
    return `Deploy to ${env}`;
  }

  @McpResourceTemplate({
    uriTemplate: 'hosts://{host}',
    name: 'host',
    complete: {
      host: (value: string, context: McpCompletionContext) => {
        ran.push(`host for ${context.principal.key}`);
        return ['db1', 'db2', 'web1'].filter((host) => host.startsWith(value));
      },
    },
  })
  host({ uri, params }: McpResourceRequest) {
    return { contents: [{ uri, text: `host ${params.host}` }] };
  }
}

/**
 * `completion/complete` honours the registry's switches: a prompt or resource template switched
 * off for a principal (or for everyone) is unknown to that caller, exactly like a name that does
 * not exist, and its completers do not run; the audit note names `McpRegistry`.
 */
describe('completion and registry switches (real app, PostgreSQL, SDK client)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  const clients: Client[] = [];

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'completion-switches-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  const completeEnv = (client: Client, name = 'deploy') =>
    client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: 'env', value: 'pr' } });
  const completeHost = (client: Client, uri = 'hosts://{host}') =>
    client.complete({ ref: { type: 'ref/resource', uri }, argument: { name: 'host', value: 'db' } });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: { code: number; message: string }) => ({ code: error.code, message: error.message }),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [Deployments] })],
      providers: [Deployments],
    });
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
    await db?.drop();
  });

  it('answers a prompt switched off for the caller as an unknown prompt, without running its completer; others still complete', async () => {
    const alice = await connect('token-alice');
    const bob = await connect('token-bob');
    const registry = server.app.get(McpRegistry);
    await registry.disable('prompt', 'deploy', { principals: ['bob'] });
    try {
      ran.length = 0;
      const refused = await failure(completeEnv(bob));
      expect(refused).toEqual(await failure(completeEnv(bob, 'deploy')));
      expect(refused).toEqual({ code: -32602, message: expect.stringContaining('Unknown prompt: deploy') });
      // The same answer, message for message, as a prompt that does not exist.
      expect(refused?.message.replace('deploy', 'nope')).toBe((await failure(completeEnv(bob, 'nope')))?.message);
      expect((await completeEnv(alice)).completion.values).toEqual(['production', 'preview']);
      expect(ran).toEqual(['env for alice']);
      const rows = await db.dataSource.query(
        `SELECT principal_key, error_code, note FROM mcp_events WHERE method = 'completion/complete' AND principal_key = 'bob' ORDER BY created_at LIMIT 1`,
      );
      expect(rows).toEqual([
        { principal_key: 'bob', error_code: -32602, note: 'Refused prompt "deploy" by McpRegistry: disabled' },
      ]);
    } finally {
      await registry.enable('prompt', 'deploy');
    }
    expect((await completeEnv(bob)).completion.values).toEqual(['production', 'preview']);
  });

  it('answers a resource template switched off for everyone as an unknown template, without running its completer', async () => {
    const alice = await connect('token-alice');
    const registry = server.app.get(McpRegistry);
    await registry.disable('resourceTemplate', 'hosts://{host}');
    try {
      ran.length = 0;
      const refused = await failure(completeHost(alice));
      expect(refused).toEqual({
        code: -32602,
        message: expect.stringContaining('Unknown resource template: hosts://{host}'),
      });
      expect(refused?.message.replace('hosts://{host}', 'hosts://{nope}')).toBe(
        (await failure(completeHost(alice, 'hosts://{nope}')))?.message,
      );
      expect(ran).toEqual([]);
    } finally {
      await registry.enable('resourceTemplate', 'hosts://{host}');
    }
    expect((await completeHost(alice)).completion.values).toEqual(['db1', 'db2']);
    expect(ran).toEqual(['host for alice']);
  });
});

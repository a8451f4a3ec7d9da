import { join } from 'node:path';
import { spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');

/**
 * Both HTTP platforms are optional peers: a host with only @nestjs/platform-fastify (Express
 * cannot even be resolved in its process) loads durable-mcp without either platform and serves
 * a mount on Fastify.
 */
describe('a host app without Express', () => {
  let app: ReadyChild | undefined;

  beforeAll(async () => {
    const env = { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') };
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'test', 'fixtures', 'adapters', 'fastify-only-app.ts')],
      { cwd: ROOT, env },
      /READY (\S+) (\[.*\])/,
    );
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('loads durable-mcp without loading any HTTP platform', () => {
    const line = /PLATFORMS-AFTER-IMPORT (\[.*\])/.exec(app!.output());
    expect(JSON.parse(line![1])).toEqual([]);
  });

  it('serves initialize and tools/call on Fastify, and never loaded Express', async () => {
    expect(JSON.parse(app!.ready[2])).not.toContain('express');
    expect(JSON.parse(app!.ready[2])).toContain('@nestjs/platform-fastify');
    const url = app!.ready[1];
    const { sessionId } = await openSession(url);
    const reply = await post(url, callRequest(3, 'echo', { text: 'no express here' }), {
      sessionId,
      headers: versionHeader(),
    });
    expect({ status: reply.status, json: reply.json }).toEqual({
      status: 200,
      json: { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'no express here' }] } },
    });
  });
});

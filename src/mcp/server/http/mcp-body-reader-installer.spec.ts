import type { ModuleRef, HttpAdapterHost } from '@nestjs/core';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpResolvedOptions } from '../config/mcp.options';
import { MCP_RAW_BODY, type McpRequest } from './mcp-body-reader';
import { McpBodyReaderInstaller, mcpPathKey } from './mcp-body-reader-installer';

describe('mcpPathKey', () => {
  it.each(['/mcp', '/MCP', '/Mcp/', '/mcp//', '//mcp', 'mcp', '/mcp///'])('maps %j to the key of /mcp', (path) => {
    expect(mcpPathKey(path)).toBe('/mcp');
  });

  it.each(['/m%63p', '/%6Dcp', '/%4D%43%50/', '/%2Fmcp', '/m%63p%2F'])(
    'decodes the percent-escapes of %j as a router does',
    (path) => {
      expect(mcpPathKey(path)).toBe('/mcp');
    },
  );

  it('decodes UTF-8 escapes, and keeps an invalid escape as it is', () => {
    expect(mcpPathKey('/caf%C3%A9/mcp')).toBe('/café/mcp');
    expect(mcpPathKey('/%E0%A4%A/m%63p')).toBe('/%e0%a4%a/mcp');
  });

  it('keeps the segments of a prefixed path apart', () => {
    expect(mcpPathKey('/API//v1/MCP/')).toBe('/api/v1/mcp');
    expect(mcpPathKey('/')).toBe('/');
  });

  it('does not merge different paths', () => {
    expect(mcpPathKey('/mcp2')).not.toBe(mcpPathKey('/mcp'));
    expect(mcpPathKey('/m/cp')).not.toBe(mcpPathKey('/mcp'));
  });
});

describe('McpBodyReaderInstaller', () => {
  const options = (mount: string, path: string) =>
    ({ mount, path, maxBodyBytes: 64, bodyTimeoutMs: 5_000 }) as McpResolvedOptions;
  const expressHost = (app: object) =>
    ({ httpAdapter: { getType: () => 'express', getInstance: () => app } }) as unknown as HttpAdapterHost;
  const withPrefix = (prefix?: string) =>
    ({
      container: { applicationConfig: { getGlobalPrefix: prefix === undefined ? undefined : () => prefix } },
    }) as unknown as ModuleRef;

  const serve = async (app: express.Express, run: (baseUrl: string) => Promise<void>) => {
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  };

  it('does nothing in an application context without HTTP', () => {
    expect(() =>
      new McpBodyReaderInstaller(
        { httpAdapter: undefined } as unknown as HttpAdapterHost,
        withPrefix(),
        options('default', '/mcp'),
      ).onModuleInit(),
    ).not.toThrow();
  });

  it('refuses an HTTP platform other than express and fastify, naming the mount and the platform', () => {
    const host = { httpAdapter: { getType: () => 'h3' } } as unknown as HttpAdapterHost;
    const installer = new McpBodyReaderInstaller(host, withPrefix(), options('tools', '/mcp'));
    expect(() => installer.onModuleInit()).toThrow(McpConfigurationError);
    expect(() => installer.onModuleInit()).toThrow(
      'McpModule (mount "tools") serves HTTP through @nestjs/platform-express or @nestjs/platform-fastify; the app uses "h3". Create the app with one of those adapters.',
    );
  });

  it('refuses a second mount of the same name on one app, but not on another app', () => {
    const app = express();
    new McpBodyReaderInstaller(expressHost(app), withPrefix(), options('twice', '/a')).onModuleInit();
    expect(() =>
      new McpBodyReaderInstaller(expressHost(app), withPrefix(), options('twice', '/b')).onModuleInit(),
    ).toThrow(McpConfigurationError);
    expect(() =>
      new McpBodyReaderInstaller(expressHost(express()), withPrefix(), options('twice', '/a')).onModuleInit(),
    ).not.toThrow();
  });

  it('reads MCP bodies ahead of a body parser the host installed first, for every mount and the prefixed path', async () => {
    const app = express();
    app.use(express.text({ type: '*/*' }));
    const echo = (req: McpRequest, res: express.Response) =>
      void res.json({ raw: req[MCP_RAW_BODY] ?? null, parsed: typeof req.body === 'string' ? req.body : null });
    for (const path of ['/one', '/two', '/api/two', '/elsewhere']) app.post(path, echo);
    new McpBodyReaderInstaller(expressHost(app), withPrefix(), options('one', '/one')).onModuleInit();
    new McpBodyReaderInstaller(expressHost(app), withPrefix('api'), options('two', 'two/')).onModuleInit();
    await serve(app, async (baseUrl) => {
      for (const path of ['/one', '/two', '/api/two']) {
        const response = await fetch(`${baseUrl}${path}`, { method: 'POST', body: '{"x":1}' });
        expect(await response.json()).toEqual({ raw: { ok: true, text: '{"x":1}' }, parsed: null });
      }
      expect((await fetch(`${baseUrl}/api/two`, { method: 'POST', body: 'z'.repeat(65) })).status).toBe(413);
      expect(await (await fetch(`${baseUrl}/elsewhere`, { method: 'POST', body: 'plain' })).json()).toEqual({
        raw: null,
        parsed: 'plain',
      });
    });
  });

  it('serves the bare path when the app has no global prefix to read', async () => {
    const app = express();
    app.post('/bare', (req: McpRequest, res) => void res.json(req[MCP_RAW_BODY] ?? null));
    new McpBodyReaderInstaller(expressHost(app), {} as ModuleRef, options('bare', '/bare')).onModuleInit();
    await serve(app, async (baseUrl) => {
      expect(await (await fetch(`${baseUrl}/bare`, { method: 'POST', body: '[]' })).json()).toEqual({
        ok: true,
        text: '[]',
      });
    });
  });
});

import { NotFoundException } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { McpResolvedOAuthOptions } from '../config/mcp-oauth.options';
import {
  createProtectedResourceController,
  McpProtectedResourceRegistration,
  McpProtectedResourceRootController,
} from './protected-resource.controller';
import { McpProtectedResourceMounts } from './protected-resource-mounts';

const oauth = (resource: string): McpResolvedOAuthOptions =>
  ({ maxAgeSec: 60, document: { resource } }) as unknown as McpResolvedOAuthOptions;

/** A response that records the headers set on it. */
function response(): { headers: Record<string, string>; header(name: string, value: string): void } {
  const headers: Record<string, string> = {};
  return { headers, header: (name, value) => void (headers[name] = value) };
}

type MountController = { get(res: unknown): unknown; preflight(): void };

describe('Protected Resource Metadata controllers', () => {
  it('a mount path becomes the well-known suffix; the root path has no per-mount controller', () => {
    expect(createProtectedResourceController('/')).toBeNull();
    expect(createProtectedResourceController('')).toBeNull();
    for (const [path, route] of [
      ['/mcp/', '/.well-known/oauth-protected-resource/mcp'],
      ['mcp//', '/.well-known/oauth-protected-resource/mcp'],
      ['/a/b', '/.well-known/oauth-protected-resource/a/b'],
    ]) {
      const Ctl = createProtectedResourceController(path)!;
      const routes = Object.getOwnPropertyNames(Ctl.prototype)
        .map((name) => Reflect.getMetadata(PATH_METADATA, (Ctl.prototype as Record<string, object>)[name]))
        .filter(Boolean);
      expect(routes).toContain(route);
    }
  });

  it('a mount controller serves its document with a cache header, 404 without oauth', () => {
    const Ctl = createProtectedResourceController('/mcp')! as new (o: McpResolvedOptions) => MountController;
    const res = response();
    expect(new Ctl({ oauth: oauth('https://api/mcp') } as McpResolvedOptions).get(res)).toEqual({
      resource: 'https://api/mcp',
    });
    expect(res.headers['Cache-Control']).toBe('public, max-age=60');
    const without = new Ctl({} as McpResolvedOptions);
    expect(() => without.get(response())).toThrow(NotFoundException);
    expect(() => without.preflight()).toThrow(NotFoundException);
    expect(() => new Ctl({ oauth: oauth('x') } as McpResolvedOptions).preflight()).not.toThrow();
  });

  it('the root path describes the mount at the root, else the first registered mount with oauth; 404 when none', () => {
    const mounts = new McpProtectedResourceMounts();
    const root = new McpProtectedResourceRootController(mounts);
    expect(() => root.get(response())).toThrow(NotFoundException);
    expect(() => root.preflight()).toThrow(NotFoundException);
    new McpProtectedResourceRegistration({ path: '/none' } as McpResolvedOptions, mounts).onModuleInit();
    new McpProtectedResourceRegistration(
      { path: '/first', oauth: oauth('first') } as McpResolvedOptions,
      mounts,
    ).onModuleInit();
    expect(root.get(response())).toEqual({ resource: 'first' });
    new McpProtectedResourceRegistration(
      { path: '/', oauth: oauth('root') } as McpResolvedOptions,
      mounts,
    ).onModuleInit();
    expect(root.get(response())).toEqual({ resource: 'root' });
    expect(() => root.preflight()).not.toThrow();
  });
});

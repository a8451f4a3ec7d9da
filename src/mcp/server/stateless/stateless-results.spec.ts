import { McpMethod } from '../../protocol/mcp-methods';
import { ResultType, StatelessMetaKey } from '../../protocol/stateless';
import type { McpResolvedOptions } from '../config/mcp.options';
import { Toolset } from '../dispatch/toolset';
import { SERVED_PROTOCOL_VERSIONS } from './stateless-envelope';
import { decorateResult, discoverResult } from './stateless-results';

const options = (cache?: McpResolvedOptions['cache']) => ({ cache }) as McpResolvedOptions;
const plain = new Toolset('spec', { name: 'results-spec', version: '1.2.3' }, 100);
const titled = new Toolset(
  'spec',
  { name: 'results-spec', version: '1.2.3', title: 'Results', instructions: 'Call ping first.' },
  100,
);

describe('stateless results', () => {
  it('discovers the served revisions and capabilities, with instructions only when the mount has some', () => {
    expect(discoverResult(plain)).toEqual({
      supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
      capabilities: { tools: { listChanged: true } },
    });
    expect(discoverResult(titled)).toEqual({
      supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
      capabilities: { tools: { listChanged: true } },
      instructions: 'Call ping first.',
    });
  });

  it('marks a result complete and names the server in _meta, with its title only when it has one', () => {
    expect(decorateResult(McpMethod.ToolsCall, { content: [] }, plain, options(), false)).toEqual({
      content: [],
      resultType: ResultType.Complete,
      _meta: { [StatelessMetaKey.ServerInfo]: { name: 'results-spec', version: '1.2.3' } },
    });
    expect(
      decorateResult(McpMethod.ToolsCall, { content: [], _meta: { trace: 't' } }, titled, options(), false)._meta,
    ).toEqual({
      trace: 't',
      [StatelessMetaKey.ServerInfo]: { name: 'results-spec', version: '1.2.3', title: 'Results' },
    });
  });

  it('keeps a handler-set resultType and serverInfo, and gives an input_required result no cache hints', () => {
    const own = { name: 'proxy', version: '9' };
    const result = decorateResult(
      McpMethod.ToolsList,
      { resultType: ResultType.InputRequired, _meta: { [StatelessMetaKey.ServerInfo]: own } },
      plain,
      options(),
      false,
    );
    expect(result).toEqual({ resultType: ResultType.InputRequired, _meta: { [StatelessMetaKey.ServerInfo]: own } });
  });

  it('ignores a _meta that is not an object', () => {
    expect(decorateResult(McpMethod.Ping, { _meta: 'x' }, plain, options(), false)._meta).toEqual({
      [StatelessMetaKey.ServerInfo]: { name: 'results-spec', version: '1.2.3' },
    });
  });

  it('gives no cache hints to a method that is not cacheable, nor to an unknown one', () => {
    for (const method of [McpMethod.ToolsCall, 'vendor/unknown']) {
      const result = decorateResult(method, {}, plain, options({ ttlMs: 5, scope: 'public' }), false);
      expect(result).not.toHaveProperty('ttlMs');
      expect(result).not.toHaveProperty('cacheScope');
    }
  });

  it('hints lists public for a minute by default, and follows the mount cache options', () => {
    expect(decorateResult(McpMethod.ToolsList, { tools: [] }, plain, options(), false)).toMatchObject({
      ttlMs: 60_000,
      cacheScope: 'public',
    });
    expect(decorateResult(McpMethod.ServerDiscover, {}, plain, options({ ttlMs: 5_000 }), false)).toMatchObject({
      ttlMs: 5_000,
      cacheScope: 'public',
    });
    expect(decorateResult(McpMethod.PromptsList, {}, plain, options({ scope: 'private' }), false)).toMatchObject({
      ttlMs: 60_000,
      cacheScope: 'private',
    });
  });

  it('hints resources/read private and stale by default, and follows the mount read options', () => {
    expect(
      decorateResult(
        McpMethod.ResourcesRead,
        { contents: [] },
        plain,
        options({ ttlMs: 99_000, scope: 'public' }),
        false,
      ),
    ).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    expect(
      decorateResult(McpMethod.ResourcesRead, {}, plain, options({ read: { ttlMs: 30_000 } }), false),
    ).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
    expect(
      decorateResult(McpMethod.ResourcesRead, {}, plain, options({ read: { scope: 'public' } }), false),
    ).toMatchObject({ ttlMs: 0, cacheScope: 'public' });
  });

  it('makes a retried multi round-trip result uncacheable', () => {
    expect(
      decorateResult(McpMethod.ToolsList, {}, plain, options({ ttlMs: 5_000, scope: 'public' }), true),
    ).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it('keeps hints the handler set itself, and replaces a cacheScope that is not one of the two scopes', () => {
    expect(
      decorateResult(McpMethod.ToolsList, { ttlMs: 10, cacheScope: 'private' }, plain, options(), false),
    ).toMatchObject({ ttlMs: 10, cacheScope: 'private' });
    expect(
      decorateResult(McpMethod.ToolsList, { ttlMs: 'soon', cacheScope: 'everyone' }, plain, options(), false),
    ).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    expect(
      decorateResult(McpMethod.ToolsList, { cacheScope: 'public' }, plain, options({ scope: 'private' }), false),
    ).toMatchObject({ cacheScope: 'public' });
  });
});

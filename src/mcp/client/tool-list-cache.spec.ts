import { Logger, type LoggerService } from '@nestjs/common';
import { McpToolListCache } from './tool-list-cache';

/** Collects what the cache logs. */
class CollectingLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

describe('McpToolListCache', () => {
  const logger = new CollectingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  afterAll(() => Logger.overrideLogger(['error', 'warn']));

  it('keeps valid tools, leaves out those with invalid x-mcp-header annotations and warns once naming each with the reason', async () => {
    const cache = new McpToolListCache();
    const tools = [
      {
        name: 'good',
        inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'Region' } } },
      },
      { name: 'bad', inputSchema: { type: 'object', properties: { s: { type: 'number', 'x-mcp-header': 'Score' } } } },
    ];
    let loads = 0;
    const load = async () => {
      loads++;
      return tools;
    };
    const list = await cache.get('srv', '', load);
    await cache.get('srv', '', load);
    expect(loads).toBe(1);
    expect(list.tools.map((tool) => tool.name)).toEqual(['good']);
    expect(list.headers.get('good')).toEqual([{ path: ['r'], name: 'Region' }]);
    expect([...list.rejected.keys()]).toEqual(['bad']);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain('"srv"');
    expect(logger.warnings[0]).toContain('"bad"');
    expect(logger.warnings[0]).toContain('type number');
  });

  it('is bounded: beyond maxEntries the least recently used list is dropped and loaded again when asked', async () => {
    const cache = new McpToolListCache(3);
    const loads: string[] = [];
    const load = (scope: string) => async () => {
      loads.push(scope);
      return [];
    };
    for (const scope of ['a', 'b', 'c']) await cache.get('srv', scope, load(scope));
    await cache.get('srv', 'a', load('a')); // a becomes the most recently used
    await cache.get('srv', 'd', load('d')); // evicts b, the least recently used
    expect(cache.size).toBe(3);
    await cache.get('srv', 'a', load('a'));
    await cache.get('srv', 'c', load('c'));
    await cache.get('srv', 'b', load('b'));
    expect(loads).toEqual(['a', 'b', 'c', 'd', 'b']);
    expect(cache.size).toBe(3);
  });

  it('keeps at most the default number of lists for many scope keys', async () => {
    const cache = new McpToolListCache();
    for (let i = 0; i < 1500; i++) await cache.get('srv', `user-${i}`, async () => []);
    expect(cache.size).toBe(1000);
  });
});

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
      { name: 'good', inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'Region' } } } },
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
});

import type { McpToolDefinition } from './tool-router';

/**
 * Tool lists per (server, scope key), kept until the server says they changed
 * (`notifications/tools/list_changed`, seen by any worker) or a listing fails.
 */
export class McpToolListCache {
  private readonly lists = new Map<string, Promise<McpToolDefinition[]>>();

  /** The cached list, or the one `load` produces (shared by concurrent callers). */
  get(server: string, scopeKey: string, load: () => Promise<McpToolDefinition[]>): Promise<McpToolDefinition[]> {
    const key = `${server}\u0000${scopeKey}`;
    let list = this.lists.get(key);
    if (!list) {
      list = load();
      this.lists.set(key, list);
      list.catch(() => {
        if (this.lists.get(key) === list) this.lists.delete(key);
      });
    }
    return list;
  }

  /** Forgets every list of a server. */
  drop(server: string): void {
    for (const key of this.lists.keys()) if (key.startsWith(`${server}\u0000`)) this.lists.delete(key);
  }
}

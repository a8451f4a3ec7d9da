import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { scanParamHeaders, type McpParamHeader } from './stateless/param-headers';
import type { McpToolDefinition } from './tool-router';

/** A server's tool list as callers get it: the usable tools, and those left out with the reason. */
export interface McpToolList {
  /** The tools a caller may use. */
  tools: McpToolDefinition[];
  /** The `Mcp-Param-*` headers of each usable tool that declares some, by tool name. */
  headers: Map<string, McpParamHeader[]>;
  /** Tools left out because of invalid `x-mcp-header` annotations: name -> reason. */
  rejected: Map<string, string>;
}

/** How many (server, scope key) lists a process keeps by default. */
export const DEFAULT_MAX_TOOL_LISTS = 1000;

/** Injection token of the cache's capacity (optional; tests and hosts with many scope keys set it). */
export const MCP_TOOL_LIST_CACHE_MAX = 'MCP_TOOL_LIST_CACHE_MAX';

/**
 * Tool lists per (server, scope key), kept until the server says they changed
 * (`notifications/tools/list_changed`, seen by any worker) or a listing fails. A tool whose
 * `x-mcp-header` annotations break the transport's rules is left out, with a warning naming it.
 * Shared by `McpClientService` and the call runner of the same process.
 * Scope keys come from callers (one per user, say), so the cache is bounded: the least recently
 * used list is dropped once it holds `maxEntries`.
 */
@Injectable()
export class McpToolListCache {
  private readonly logger = new Logger(McpToolListCache.name);
  private readonly lists = new Map<string, Promise<McpToolList>>();

  constructor(
    @Optional() @Inject(MCP_TOOL_LIST_CACHE_MAX) private readonly maxEntries: number = DEFAULT_MAX_TOOL_LISTS,
  ) {
    this.maxEntries ??= DEFAULT_MAX_TOOL_LISTS;
  }

  /** How many lists are cached. */
  get size(): number {
    return this.lists.size;
  }

  /** The cached list, or the one `load` produces (shared by concurrent callers). */
  get(server: string, scopeKey: string, load: () => Promise<McpToolDefinition[]>): Promise<McpToolList> {
    const key = `${server}\u0000${scopeKey}`;
    let list = this.lists.get(key);
    if (list) {
      // Map order is insertion order: re-inserting marks the entry most recently used.
      this.lists.delete(key);
      this.lists.set(key, list);
    } else {
      list = load().then((tools) => this.screen(server, tools));
      this.lists.set(key, list);
      if (this.lists.size > this.maxEntries) this.lists.delete(this.lists.keys().next().value as string);
      list.catch(() => {
        if (this.lists.get(key) === list) this.lists.delete(key);
      });
    }
    return list;
  }

  /** The list already cached (or being loaded) for (server, scope key), without loading one. */
  cached(server: string, scopeKey: string): Promise<McpToolList> | undefined {
    return this.lists.get(`${server}\u0000${scopeKey}`);
  }

  /** Forgets every list of a server. */
  drop(server: string): void {
    for (const key of this.lists.keys()) if (key.startsWith(`${server}\u0000`)) this.lists.delete(key);
  }

  private screen(server: string, all: McpToolDefinition[]): McpToolList {
    const list: McpToolList = { tools: [], headers: new Map(), rejected: new Map() };
    for (const tool of all) {
      const scan = scanParamHeaders(tool.inputSchema);
      if (!scan.ok) {
        list.rejected.set(tool.name, scan.reason);
        this.logger.warn(`MCP server "${server}": the tool "${tool.name}" is left out: ${scan.reason}`);
        continue;
      }
      list.tools.push(tool);
      if (scan.headers.length) list.headers.set(tool.name, scan.headers);
    }
    return list;
  }
}

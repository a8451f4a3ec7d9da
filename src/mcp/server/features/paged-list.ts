import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { decodeCursor, encodeCursor } from '../tools/list-cursor';

/**
 * A list answer (`resources/list`, `prompts/list`...) computed once at boot and served in pages
 * with the same opaque cursors as `tools/list`.
 */
export class PagedList {
  private readonly pages: readonly (readonly Readonly<Record<string, unknown>>[])[];

  constructor(
    /** The result key holding the items (`resources`, `resourceTemplates`, `prompts`). */
    private readonly key: string,
    items: readonly Readonly<Record<string, unknown>>[],
    pageSize: number,
  ) {
    const pages: Readonly<Record<string, unknown>>[][] = [];
    for (let i = 0; i < items.length; i += pageSize) pages.push(items.slice(i, i + pageSize));
    this.pages = pages.length ? pages : [[]];
  }

  /** The page a cursor points at (the first without one); an unknown cursor is -32602. */
  page(cursor: unknown): Record<string, unknown> {
    const index = cursor === undefined ? 0 : decodeCursor(cursor);
    if (index === null || index >= this.pages.length) {
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: unknown cursor');
    }
    const next = index + 1 < this.pages.length ? { nextCursor: encodeCursor(index + 1) } : {};
    return { [this.key]: this.pages[index], ...next };
  }
}

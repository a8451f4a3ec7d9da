import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { HandlerPipeline } from './handler-pipeline';

/**
 * What every served handler (tool, prompt, resource, resource template) carries, whether a
 * decorator or `McpRegistry` declared it: the kind-specific entries extend it.
 */
export interface CatalogEntry {
  /** `Class#method` of a decorated handler, `McpRegistry#add…(name)` of a runtime one; named in messages. */
  owner: string;
  /** The definition the kind's list publishes, computed once. */
  definition: Readonly<Record<string, unknown>>;
  /** Nest's guards, interceptors, pipes and filters of the handler; absent when it has none (the direct call). */
  pipeline?: HandlerPipeline;
}

/** The message of a second entry under a key already served, naming both owners. */
export type DuplicateMessage = (key: string, first: string, second: string) => string;

/**
 * The handlers of one kind on one mount, keyed by what a client names them with (tool or prompt
 * name, resource URI, template string), in registration order. Boot discovery and `McpRegistry`
 * both add through it, so a duplicate is refused the same way however the second one came.
 */
export class HandlerCatalog<T extends CatalogEntry> {
  private readonly entries = new Map<string, T>();

  /**
   * @param keyOf the key an entry is served under
   * @param duplicate the message of the `McpConfigurationError` a second entry under a key raises
   * @param changed called after every addition and removal (lists computed from the catalog go stale)
   */
  constructor(
    private readonly keyOf: (entry: T) => string,
    private readonly duplicate: DuplicateMessage,
    private readonly changed: () => void = () => undefined,
  ) {}

  /** Adds an entry; one under a key already served is an `McpConfigurationError` naming both owners. */
  add(entry: T): void {
    const key = this.keyOf(entry);
    const existing = this.entries.get(key);
    if (existing) throw new McpConfigurationError(this.duplicate(key, existing.owner, entry.owner));
    this.entries.set(key, entry);
    this.changed();
  }

  /** Removes the entry under `key` and returns it; undefined when there was none. */
  remove(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.changed();
    return entry;
  }

  /** The entry under `key`, if any. */
  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  /** The entries, in registration order (a live iterator: spread it to keep a snapshot). */
  values(): IterableIterator<T> {
    return this.entries.values();
  }

  /** How many entries are served. */
  get size(): number {
    return this.entries.size;
  }
}

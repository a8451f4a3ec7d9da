import type { Type } from '@nestjs/common';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpTransportFactory } from './mcp-transport-factory.interface';

/**
 * One transport factory as `mcpTransports()` takes it: a class, which Nest builds as a provider
 * of the client's module (so it may inject what it needs), or an instance.
 */
export type McpTransportFactoryEntry = Type<McpTransportFactory<any>> | McpTransportFactory<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each factory has its own options type; `unknown` would refuse those with narrower ones

/**
 * The `transports` extra of `McpClientModule`: the app's own transports beside the built-in
 * `stdio`, `http` and `toolset`, built by `mcpTransports()` of `durable-mcp/transports`.
 */
export interface McpClientTransports {
  /** Set by `mcpTransports()`: marks a value built for the `transports` extra. */
  readonly forMcpClientTransports: true;
  /** @internal */
  readonly factories: readonly McpTransportFactoryEntry[];
}

/**
 * The `transports` extra of `McpClientModule` from the app's transport factories (classes or
 * instances). Servers name one with `transport: '<name>'`; two factories for one name, or one for
 * a built-in name, fail at boot.
 *
 * @example
 * ```ts
 * McpClientModule.forRoot({ redis, servers, transports: mcpTransports(WebSocketTransportFactory) });
 * ```
 */
export function mcpTransports(...factories: McpTransportFactoryEntry[]): McpClientTransports {
  return { forMcpClientTransports: true, factories };
}

/** The factories of a `transports` extra; anything not built by `mcpTransports()` is refused. */
export function transportFactoryEntries(
  transports: McpClientTransports | undefined,
): readonly McpTransportFactoryEntry[] {
  if (transports === undefined) return [];
  if (
    typeof transports !== 'object' ||
    transports === null ||
    (transports as Partial<McpClientTransports>).forMcpClientTransports !== true ||
    !Array.isArray(transports.factories)
  )
    throw new McpConfigurationError(
      'McpClientModule: "transports" must be built with mcpTransports(...) from durable-mcp/transports, e.g. transports: mcpTransports(MyTransportFactory)',
    );
  return transports.factories as readonly McpTransportFactoryEntry[];
}

import { HttpTransportFactory } from './http/http-transport.factory';
import type { McpTransportFactory } from './mcp-transport-factory.interface';
import { StdioTransportFactory } from './stdio/stdio-transport.factory';
import { ToolsetTransportFactory } from './toolset/toolset-transport.factory';

/** The factories of the transports the client ships, by transport name. */
export const BUILT_IN_TRANSPORT_FACTORIES: ReadonlyMap<string, McpTransportFactory<object>> = new Map(
  [new StdioTransportFactory(), new HttpTransportFactory(), new ToolsetTransportFactory()].map((factory) => [
    factory.transport,
    factory as McpTransportFactory<object>,
  ]),
);

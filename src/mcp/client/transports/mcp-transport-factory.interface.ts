import type { McpServerCommonConfig } from '../interfaces/mcp-server-config.interface';
import type { McpTransport } from './mcp-transport.interface';

/** What a transport factory is given when it builds the transport of one server. */
export interface McpTransportFactoryContext {
  /** The configured name of the server. */
  server: string;
  /**
   * The client capabilities the registered server->client handlers can answer (sampling,
   * elicitation, roots); a transport that performs the handshake announces them.
   */
  clientCapabilities: Record<string, unknown>;
  /**
   * Finds a provider of the app (for example a toolset of a mount, by its token), without
   * regard to module boundaries.
   */
  resolve<T = unknown>(token: string | symbol | (abstract new (...args: never[]) => T)): T;
}

/**
 * Turns server entries with one `transport` value into `McpTransport`s. The client ships factories
 * for `stdio`, `http` and `toolset`; an app adds its own (a WebSocket transport, say) with
 * `McpClientModule.forRoot({ transports: mcpTransports(MyTransportFactory) })` and declares servers with
 * `transport: 'my-name'`. Every factory in use is injectable under `MCP_TRANSPORT_FACTORIES`.
 *
 * @example
 * ```ts
 * @Injectable()
 * class WebSocketTransportFactory implements McpTransportFactory<{ url: string }> {
 *   readonly transport = 'websocket';
 *   resolve(server: string, entry: Record<string, unknown>) {
 *     if (typeof entry.url !== 'string') throw new Error('"url" must be a ws:// URL');
 *     return { url: entry.url };
 *   }
 *   create(config: { url: string }) {
 *     return new WebSocketTransport(config.url);
 *   }
 * }
 * ```
 */
export interface McpTransportFactory<TConfig extends object = Record<string, unknown>> {
  /** The `transport` value of the server entries this factory serves, e.g. `'websocket'`. */
  readonly transport: string;
  /**
   * The settings this factory reads from a server entry, beside the common ones (`version`,
   * `probeTimeoutMs`, `scope`, `timeoutMs`) and `transport`. When given, an entry with any other
   * key is refused at boot, naming the closest known one (a `timeout` meant as `timeoutMs`).
   * @default unchecked: the factory's `resolve` sees every key
   */
  readonly optionKeys?: readonly string[];
  /**
   * Checks one server entry at boot and returns the settings `create` receives. Throw an `Error`
   * whose message says what to fix; the client prefixes it with the server's name. The
   * settings every entry shares (`version`, `probeTimeoutMs`, `scope`, `timeoutMs`) are checked
   * by the client before this runs.
   * @default the entry as it is
   */
  resolve?(server: string, entry: Record<string, unknown>): TConfig;
  /** Builds the transport of one server; called once per server per process, on first use. */
  create(config: TConfig & McpServerCommonConfig, context: McpTransportFactoryContext): McpTransport;
  /**
   * What a protocol-revision verdict (`version: 'auto'`) belongs to: two servers with the same key
   * are the same endpoint and share the verdict. Return null for a transport that needs no
   * negotiation because it always reaches this app's own toolsets.
   * @default the transport name and the server's settings
   */
  endpointKey?(config: TConfig): string | null;
  /**
   * Whether stateless `tools/call` requests over this transport carry `Mcp-Param-*` headers
   * (they exist for HTTP intermediaries).
   * @default false
   */
  readonly routingHeaders?: boolean;
}

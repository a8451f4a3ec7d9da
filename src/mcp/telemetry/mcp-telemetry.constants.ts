/** The instrumentation scope name of the package's tracer and meter. */
export const MCP_INSTRUMENTATION_NAME = 'durable-mcp';

function packageVersion(): string | undefined {
  try {
    // Same depth from src/mcp/telemetry and dist/mcp/telemetry: the package's own manifest.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the manifest is outside rootDir, so it cannot be imported
    return (require('../../../package.json') as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The instrumentation scope version: the package's version. */
export const MCP_INSTRUMENTATION_VERSION = packageVersion();

/** Attribute names of the OpenTelemetry semantic conventions (MCP, GenAI, RPC, network) the spans and metrics use. */
export const McpAttr = {
  MethodName: 'mcp.method.name',
  SessionId: 'mcp.session.id',
  ProtocolVersion: 'mcp.protocol.version',
  ResourceUri: 'mcp.resource.uri',
  RequestId: 'jsonrpc.request.id',
  RpcStatusCode: 'rpc.response.status_code',
  ToolName: 'gen_ai.tool.name',
  PromptName: 'gen_ai.prompt.name',
  OperationName: 'gen_ai.operation.name',
  NetworkTransport: 'network.transport',
  NetworkProtocolName: 'network.protocol.name',
  ServerAddress: 'server.address',
  ServerPort: 'server.port',
  ClientAddress: 'client.address',
  ErrorType: 'error.type',
  HttpRequestMethod: 'http.request.method',
  HttpResponseStatusCode: 'http.response.status_code',
  /** The package's own: the mount that served an inbound exchange. */
  Mount: 'mcp.mount',
  /** The package's own: the configured name of the server an outbound call goes to. */
  ServerName: 'mcp.server.name',
  /** The package's own: the stream a GET opened (`session`: the session's standalone stream; `request`: a POST stream resumed). */
  StreamKind: 'mcp.stream.kind',
  /** The package's own: true when a GET carried `Last-Event-ID` (a resumption). */
  StreamResumed: 'mcp.stream.resumed',
  /** The package's own (with `recordPayloads`): the request's params, JSON, cut. */
  RequestParams: 'mcp.request.params',
  /** The package's own (with `recordPayloads`): the result or error, JSON, cut. */
  ResponseResult: 'mcp.response.result',
} as const;

/** `error.type` of a `tools/call` answered with `isError: true`. */
export const TOOL_ERROR_TYPE = 'tool_error';

/**
 * What the OpenTelemetry spans of a mount (`McpModule`) or of the client (`McpClientModule`)
 * record beyond the default attributes. Spans and metrics exist only when the host registers an
 * OpenTelemetry SDK; without one every call is a no-op.
 */
export interface McpTelemetryOptions {
  /**
   * Adds the arguments and the result (or error) of each exchange to its span, as the
   * attributes `mcp.request.params` and `mcp.response.result` (JSON, cut to
   * `maxPayloadLength` characters). Off by default: arguments and results may hold personal
   * data, and spans often leave the process.
   * @default false
   */
  recordPayloads?: boolean;
  /**
   * Longest payload attribute kept with `recordPayloads`, in characters; longer JSON is cut and
   * ends with `…`.
   * @default 1024
   * @minimum 16
   * @unit characters
   */
  maxPayloadLength?: number;
}

/** The checked form of `McpTelemetryOptions` (both modules resolve it from their options model). */
export type McpResolvedTelemetryOptions = Required<McpTelemetryOptions>;

/** The default of `McpTelemetryOptions.maxPayloadLength`. */
export const DEFAULT_MAX_PAYLOAD_LENGTH = 1024;

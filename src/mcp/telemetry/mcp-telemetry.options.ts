import { assertKnownOptions, McpConfigurationError, optionKeys } from '../errors/mcp-configuration.errors';

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
   */
  maxPayloadLength?: number;
}

/** The checked form of `McpTelemetryOptions`. */
export interface McpResolvedTelemetryOptions {
  /** Add payloads to spans. */
  recordPayloads: boolean;
  /** Longest payload attribute, in characters. */
  maxPayloadLength: number;
}

/** The default of `McpTelemetryOptions.maxPayloadLength`. */
export const DEFAULT_MAX_PAYLOAD_LENGTH = 1024;

const TELEMETRY_OPTION_KEYS = optionKeys<McpTelemetryOptions>({ recordPayloads: true, maxPayloadLength: true });

/**
 * Checks a `telemetry` option (`McpModule` and `McpClientModule` both take one). `invalid(option,
 * expected)` builds the configuration message of the module that reads it; `where` names that
 * module in an unknown-key error.
 * @throws McpConfigurationError
 */
export function resolveTelemetryOptions(
  telemetry: McpTelemetryOptions | undefined,
  invalid: (option: string, expected: string) => string,
  where: string,
): McpResolvedTelemetryOptions {
  if (telemetry === undefined) return { recordPayloads: false, maxPayloadLength: DEFAULT_MAX_PAYLOAD_LENGTH };
  if (telemetry === null || typeof telemetry !== 'object' || Array.isArray(telemetry))
    throw new McpConfigurationError(invalid('telemetry', 'an object like { recordPayloads: true }'));
  assertKnownOptions(telemetry, TELEMETRY_OPTION_KEYS, `${where} option "telemetry"`);
  const recordPayloads = telemetry.recordPayloads ?? false;
  if (typeof recordPayloads !== 'boolean')
    throw new McpConfigurationError(invalid('telemetry.recordPayloads', 'true or false'));
  const maxPayloadLength = telemetry.maxPayloadLength ?? DEFAULT_MAX_PAYLOAD_LENGTH;
  if (typeof maxPayloadLength !== 'number' || !Number.isInteger(maxPayloadLength) || maxPayloadLength < 16) {
    throw new McpConfigurationError(invalid('telemetry.maxPayloadLength', 'an integer of at least 16 (characters)'));
  }
  return { recordPayloads, maxPayloadLength };
}

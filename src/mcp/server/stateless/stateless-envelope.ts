import type { McpLogLevel } from '../../protocol/log-levels';
import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { SESSION_PROTOCOL_VERSIONS } from '../../protocol/revisions';
import {
  STATELESS_PROTOCOL_VERSIONS,
  StatelessErrorCode,
  StatelessMetaKey,
  isStatelessVersion,
} from '../../protocol/stateless';
import { isLogLevel } from '../pipeline/handler-context.factory';
import { checkRoutingHeaders, type HeaderReader } from './stateless-headers';
import { invalidEnvelope, type StatelessRejection } from './stateless-rejection';

/** Every revision the endpoint serves, newest first: what `server/discover` and -32022 list. */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [
  ...STATELESS_PROTOCOL_VERSIONS,
  ...SESSION_PROTOCOL_VERSIONS,
];

/** What the `_meta` envelope of a stateless request says about its sender. */
export interface StatelessEnvelope {
  /** The revision the request speaks. */
  version: string;
  /** The capabilities the client declared for this request. */
  clientCapabilities: Record<string, unknown>;
  /** The client's self-reported name and version, when sent. */
  clientInfo: Record<string, unknown> | null;
  /** The least severe log level the client wants for this request; null sends no log messages. */
  logLevel: McpLogLevel | null;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/**
 * Reads and checks one stateless message, in the order the specification's errors depend on:
 * a malformed envelope (-32602), headers that disagree with the body (-32020), an unsupported
 * revision (-32022 with the supported list), then an unknown log level (-32602). `header` is
 * null on a transport without a header layer (stdio): the body alone carries the metadata.
 */
export function readStatelessEnvelope(
  message: JsonRpcRequest | JsonRpcNotification,
  header: HeaderReader | null,
): StatelessEnvelope | StatelessRejection {
  const meta = asObject(message.params?._meta);
  if (!meta)
    return invalidEnvelope(
      `a ${STATELESS_PROTOCOL_VERSIONS[0]} request needs params._meta with "${StatelessMetaKey.ProtocolVersion}" and "${StatelessMetaKey.ClientCapabilities}"`,
    );
  const version = meta[StatelessMetaKey.ProtocolVersion];
  if (typeof version !== 'string' || !version)
    return invalidEnvelope(`_meta["${StatelessMetaKey.ProtocolVersion}"] must be a protocol version string`);
  const clientCapabilities = asObject(meta[StatelessMetaKey.ClientCapabilities]);
  if (!clientCapabilities) return invalidEnvelope(`_meta["${StatelessMetaKey.ClientCapabilities}"] must be an object`);
  const headerProblem = header ? checkRoutingHeaders(message, version, header) : null;
  if (headerProblem) return headerProblem;
  if (!isStatelessVersion(version)) {
    return {
      status: 400,
      code: StatelessErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version "${String(version)}" (supported: ${SERVED_PROTOCOL_VERSIONS.join(', ')})`,
      data: { supported: [...SERVED_PROTOCOL_VERSIONS], requested: version },
    };
  }
  const logLevel = meta[StatelessMetaKey.LogLevel];
  if (logLevel !== undefined && !isLogLevel(logLevel))
    return invalidEnvelope(`_meta["${StatelessMetaKey.LogLevel}"] is not a log level`);
  return {
    version,
    clientCapabilities,
    clientInfo: asObject(meta[StatelessMetaKey.ClientInfo]),
    logLevel: logLevel ?? null,
  };
}

/** True when `value` is a refusal rather than a readable envelope. */
export function isRejection(value: StatelessEnvelope | StatelessRejection): value is StatelessRejection {
  return 'code' in value;
}

import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpHeader } from '../../protocol/mcp-methods';
import { methodFacts } from '../../protocol/method-catalog';
import { StatelessHeader, decodeHeaderValue } from '../../protocol/stateless';
import { headerMismatch, type StatelessRejection } from './stateless-rejection';

/** Reads one request header by its lower-case name. */
export type HeaderReader = (name: string) => string | undefined;

/**
 * Checks the headers that mirror the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`):
 * an intermediary may have routed on them, so a request whose headers say something else than
 * its body is refused. Values are compared after trimming optional whitespace and decoding the
 * Base64 sentinel form; they are case-sensitive.
 */
export function checkRoutingHeaders(
  message: JsonRpcRequest | JsonRpcNotification,
  version: string,
  header: HeaderReader,
): StatelessRejection | null {
  const versionHeader = header(McpHeader.ProtocolVersion)?.trim();
  if (!versionHeader) return headerMismatch('the MCP-Protocol-Version header is required');
  if (versionHeader !== version) {
    return headerMismatch(
      `MCP-Protocol-Version header value '${versionHeader}' does not match body value '${version}'`,
    );
  }
  if (!('id' in message)) return null; // the specification defines no header rules for notification POSTs
  const methodHeader = header(StatelessHeader.Method);
  if (methodHeader === undefined) return headerMismatch('the Mcp-Method header is required');
  const method = decodeHeaderValue(methodHeader);
  if (method === null) return headerMismatch('the Mcp-Method header value is malformed');
  if (method !== message.method)
    return headerMismatch(`Mcp-Method header value '${method}' does not match body value '${message.method}'`);
  const source = methodFacts(message.method)?.nameSource ?? undefined;
  const bodyName = source === undefined ? undefined : message.params?.[source];
  const nameHeader = header(StatelessHeader.Name);
  if (source === undefined || typeof bodyName !== 'string') {
    if (nameHeader === undefined) return null;
    const extra = decodeHeaderValue(nameHeader);
    return extra === null ? headerMismatch('the Mcp-Name header value is malformed') : null;
  }
  if (nameHeader === undefined) return headerMismatch(`the Mcp-Name header is required for ${message.method}`);
  const name = decodeHeaderValue(nameHeader);
  if (name === null) return headerMismatch('the Mcp-Name header value is malformed');
  if (name !== bodyName)
    return headerMismatch(`Mcp-Name header value '${name}' does not match body value '${bodyName}'`);
  return null;
}

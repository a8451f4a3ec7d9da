import { McpUnsupportedElicitationModeError } from '../../errors/mcp-elicitation.errors';
import type { JsonRpcResponse } from '../../protocol/jsonrpc';
import { URL_ELICITATION_REQUIRED, declaredElicitationModes } from '../../protocol/elicitation';
import { McpMethod } from '../../protocol/mcp-methods';
import type { StatelessInputChannel } from './input-channel';

interface RequiredUrlElicitation {
  elicitationId: string;
  url: string;
  message: string;
}

function isRequiredUrlElicitation(value: unknown): value is RequiredUrlElicitation {
  const entry = value as Record<string, unknown> | null;
  return (
    !!entry &&
    typeof entry === 'object' &&
    ['elicitationId', 'url', 'message'].every((field) => typeof entry[field] === 'string' && entry[field] !== '')
  );
}

/** The elicitations of a URL elicitation required error response; undefined for any other response. */
function requiredElicitations(response: JsonRpcResponse | null): RequiredUrlElicitation[] | undefined {
  if (!response || !('error' in response) || response.error.code !== URL_ELICITATION_REQUIRED) return undefined;
  const listed = (response.error.data as { elicitations?: unknown } | undefined)?.elicitations;
  return Array.isArray(listed) && listed.length && listed.every(isRequiredUrlElicitation) ? listed : undefined;
}

/**
 * The stateless revision has no URL elicitation required error (-32042 is reserved there): a
 * handler's `McpUrlElicitationRequiredError` becomes one URL mode input request per elicitation,
 * keyed by its `elicitationId`, on the round's channel, so the round closes `input_required`.
 * Returns the response to send instead: null when the channel now needs input, the
 * missing-capability error when the client did not declare URL mode, or the response unchanged.
 */
export function askRequiredUrlElicitations(
  response: JsonRpcResponse | null,
  channel: StatelessInputChannel | undefined,
  clientCapabilities: Record<string, unknown> | null | undefined,
): JsonRpcResponse | null {
  const elicitations = channel && response ? requiredElicitations(response) : undefined;
  if (!elicitations || !channel || !response) return response;
  if (!declaredElicitationModes(clientCapabilities).includes('url')) {
    return { jsonrpc: '2.0', id: response.id, error: new McpUnsupportedElicitationModeError('url').toJsonRpc() };
  }
  for (const { elicitationId, url, message } of elicitations)
    channel.require(elicitationId, McpMethod.ElicitationCreate, { mode: 'url', message, url });
  return null;
}

import { McpProtocolError } from '../../errors/mcp-client.errors';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import { MCP_METHOD_CATALOG, methodFacts } from '../../protocol/method-catalog';
import type { McpServerRequestHandler } from '../transports/mcp-transport.interface';

/** What the retry of a request carries after an `input_required` answer. */
export interface McpInputRetry {
  /** The answers, keyed like the server's `inputRequests`. */
  inputResponses?: Record<string, unknown>;
  /** The server's `requestState`, exactly as received. */
  requestState?: string;
}

const INPUT_REQUIRED_METHODS = MCP_METHOD_CATALOG.filter((facts) => facts.inputRequired).map((facts) => facts.method);

/** The requests that may be answered with `input_required`, for messages: "a, b and c". */
const INPUT_REQUIRED_LIST = `${INPUT_REQUIRED_METHODS.slice(0, -1).join(', ')} and ${INPUT_REQUIRED_METHODS.at(-1)}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Fulfils the `inputRequests` of an `input_required` result with the client's handlers (the same
 * ones that answer 2025-era server requests), one after the other, and returns what the retry
 * must carry. `requestState` is an opaque string: it is handed back untouched, never parsed.
 * @throws McpProtocolError when the result is malformed; McpInputRequiredError when a request
 *   cannot be answered.
 */
export async function fulfilInputRequests(
  server: string,
  method: string,
  result: Record<string, unknown>,
  answer: McpServerRequestHandler,
): Promise<McpInputRetry> {
  const where = `MCP server "${server}" answered ${method} with input_required`;
  if (!methodFacts(method)?.inputRequired)
    throw new McpProtocolError(`${where}, which only ${INPUT_REQUIRED_LIST} allow`, true);
  const { inputRequests, requestState } = result;
  if (inputRequests !== undefined && !isRecord(inputRequests))
    throw new McpProtocolError(`${where} whose inputRequests is not an object`, true);
  if (requestState !== undefined && typeof requestState !== 'string')
    throw new McpProtocolError(`${where} whose requestState is not a string`, true);
  if (inputRequests === undefined && requestState === undefined)
    throw new McpProtocolError(`${where} but neither inputRequests nor requestState`, true);
  const retry: McpInputRetry = {};
  if (inputRequests) {
    const responses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(inputRequests)) {
      if (
        !isRecord(request) ||
        typeof request.method !== 'string' ||
        (request.params !== undefined && !isRecord(request.params))
      ) {
        throw new McpProtocolError(`${where} whose input request "${key}" is not a request object`, true);
      }
      try {
        responses[key] = await answer({
          jsonrpc: '2.0',
          id: key,
          method: request.method,
          ...(request.params ? { params: request.params } : {}),
        });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new McpInputRequiredError(
          `${where}; its "${key}" request (${request.method}) could not be answered: ${reason}`,
          server,
          method,
        );
      }
    }
    retry.inputResponses = responses;
  }
  if (typeof requestState === 'string') retry.requestState = requestState;
  return retry;
}

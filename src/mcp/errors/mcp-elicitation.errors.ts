import { McpMethod } from '../protocol/mcp-methods';
import { URL_ELICITATION_REQUIRED, type McpElicitationMode } from '../protocol/elicitation';
import { StatelessErrorCode } from '../protocol/stateless';
import { McpRpcError } from './mcp-rpc.errors';

/**
 * `ctx.elicit` was asked for a mode the client did not declare in its `elicitation` capability
 * (URL mode to a form-only client, or a form to a URL-only one). A tool may catch it and carry
 * on another way; uncaught it answers the request with the stateless revision's
 * missing-capability error (-32021), naming the mode in `data.requiredCapabilities`.
 */
export class McpUnsupportedElicitationModeError extends McpRpcError {
  constructor(
    /** The mode the client did not declare. */
    readonly mode: McpElicitationMode,
  ) {
    super(
      StatelessErrorCode.MissingRequiredClientCapability,
      `The client did not declare ${mode === 'url' ? 'URL' : 'form'} mode elicitation (capabilities.elicitation.${mode}) that this ${McpMethod.ElicitationCreate} needs`,
      { requiredCapabilities: { elicitation: { [mode]: {} } } },
    );
    this.name = 'McpUnsupportedElicitationModeError';
  }
}

/** One URL elicitation the client must complete before it retries a request. */
export interface McpRequiredUrlElicitation {
  /** The page the user should open. */
  url: string;
  /** Why the user should open it. */
  message: string;
  /** The id of the elicitation, unique within the server. */
  elicitationId: string;
}

/** The `data.elicitations` of the error, as the 2025-11-25 schema spells them. */
function wireElicitations(elicitations: readonly McpRequiredUrlElicitation[]): Record<string, unknown>[] {
  // Kept apart from the runtime check below, which would widen the checked reference to `any[]`.
  const list: readonly McpRequiredUrlElicitation[] = elicitations;
  if (!Array.isArray(elicitations) || !elicitations.length)
    throw new TypeError('McpUrlElicitationRequiredError needs at least one elicitation');
  return list.map(({ url, message, elicitationId }) => ({ mode: 'url', elicitationId, url, message }));
}

/**
 * Thrown by a handler that cannot go on before the user completes one or more URL
 * elicitations (connect a third-party account, pay). On a 2025 session the request is answered
 * with JSON-RPC error -32042 whose `data.elicitations` lists them; the client opens them and
 * retries. The stateless revision has no such error: the request is answered `input_required`
 * with one URL elicitation per entry (keyed by its `elicitationId`), and the retry replays the
 * handler, which throws again or, the interaction being over, completes.
 *
 * @example
 * ```ts
 * if (!(await this.tokens.has(ctx.principal.key))) {
 *   const elicitationId = randomUUID();
 *   throw new McpUrlElicitationRequiredError([{ elicitationId, message: 'Connect your calendar', url: `https://app.example/connect?e=${elicitationId}` }]);
 * }
 * ```
 */
export class McpUrlElicitationRequiredError extends McpRpcError {
  constructor(
    /** The elicitations the client must complete first (at least one). */
    readonly elicitations: readonly McpRequiredUrlElicitation[],
    message = `This request requires more information: ${elicitations.length === 1 ? 'a URL elicitation' : `${elicitations.length} URL elicitations`} must be completed first`,
  ) {
    super(URL_ELICITATION_REQUIRED, message, { elicitations: wireElicitations(elicitations) });
    this.name = 'McpUrlElicitationRequiredError';
  }
}

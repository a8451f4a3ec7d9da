import type { McpLogLevel } from '../protocol/log-levels';
import type { McpPrincipal } from './principal.interface';

/** What the client answered to an elicitation. */
export interface McpElicitResult {
  /** What the user did: submitted the form, refused, or dismissed it. */
  action: 'accept' | 'decline' | 'cancel';
  /** The values the user submitted, with `accept` in form mode. */
  content?: Record<string, unknown>;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/**
 * A URL mode elicitation (`ctx.elicit({ mode: 'url', url, message })`): the user opens `url` in
 * their browser, out of reach of the client, for what must not pass through it (OAuth consent
 * with a third party, a payment, a credential).
 */
export interface McpUrlElicitation extends McpInputRequestOptions {
  /** Selects URL mode (a form elicitation takes a message and a schema instead). */
  mode: 'url';
  /** The page the user should open. It must not carry credentials or personal data. */
  url: string;
  /** Why the user should open it, shown by the client next to the URL. */
  message: string;
  /**
   * The id of the elicitation, unique within the server (2025-11-25 sends it to the client and
   * names it again in `notifications/elicitation/complete`; the stateless revision has none on
   * the wire). Put it in `url` when the page needs it: then give it here. On the stateless
   * revision the handler runs again on every round, so a generated id changes from round to
   * round: give one of your own if it must stay the same.
   * @default a random UUID
   */
  elicitationId?: string;
}

/**
 * What the client answered to a URL mode elicitation: `accept` means the user agreed to open
 * the URL, not that the interaction out of band is over.
 */
export interface McpUrlElicitResult extends McpElicitResult {
  /** The id of the elicitation (the one given, or the one generated). */
  elicitationId: string;
}

/**
 * The task a handler runs as (`ctx.task`), when the client called the tool as a task. Status
 * messages update the task's row (what `tasks/get` answers) and reach the client's session as
 * `notifications/tasks/status`, from whichever replica runs the task; progress goes through
 * `ctx.progress` as for any call.
 */
export interface McpTaskContext {
  /** The task id the client polls. */
  readonly id: string;
  /** Sets the task's status message. Resolves false when the task is already over (cancelled, for one). */
  update(statusMessage: string): Promise<boolean>;
}

/** A root the client exposes. */
export interface McpRoot {
  /** The root's URI (a `file://` URI today). */
  uri: string;
  /** A name to show for the root, when the client gives one. */
  name?: string;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/** Options of one request a handler makes to the client (`elicit`, `sample`, `listRoots`). */
export interface McpInputRequestOptions {
  /**
   * The key of the request in a 2026-07-28 `input_required` result (`inputRequests`) and in
   * the client's `inputResponses`. Unique within the call; use the same key on every replay.
   * Ignored on 2025 sessions, where the request travels as a JSON-RPC request.
   * @default '<kind>-<n>' (`elicitation-1`, `sampling-2`, `roots-3`: the n-th unnamed request)
   */
  key?: string;
}

/**
 * Values a handler keeps across the `input_required` rounds of one 2026-07-28 request, sealed in
 * the round's `requestState` with the answers (the client carries them and can read them, but not
 * alter them). A value set in a round that ends with `input_required` is there on the next round.
 */
export interface McpRoundState {
  /** The value the previous round kept under `name`, or the one set since in this round. */
  get(name: string): string | undefined;
  /** Keeps `value` under `name` for the next round (`undefined` drops it). */
  set(name: string, value: string | undefined): void;
}

/**
 * The second argument of every handler (`@McpTool` and friends): who is calling, on which
 * session and mount, a signal that aborts on cancellation, and the way back to the client. The
 * same calls work on every protocol revision: on a 2025 session they travel on the request's SSE
 * stream, on 2026-07-28 they become notifications on the response stream or `input_required`
 * round trips.
 */
export interface McpToolContext {
  /** The authenticated caller. */
  principal: McpPrincipal;
  /** The MCP session id, or null when the request carried none (in-process or stateless). */
  sessionId: string | null;
  /** Name of the mount serving the call. */
  mount: string;
  /** The protocol revision of the request. */
  protocolVersion: string;
  /** The JSON-RPC id of the request. */
  requestId: string | number;
  /** Aborts on `notifications/cancelled` for this request or when the HTTP client disconnects. */
  signal: AbortSignal;
  /** The `_meta` object the client sent with the request, if any. */
  meta?: Record<string, unknown>;
  /** The task this call runs as, when the client called the tool as a task; absent otherwise. */
  task?: McpTaskContext;
  /**
   * On a 2026-07-28 request that may answer `input_required` (`tools/call`, `prompts/get`,
   * `resources/read`): values kept across its rounds in the sealed `requestState`. Absent on
   * other revisions and requests.
   */
  round?: McpRoundState;
  /** Sends a log message to the client, if it asked for this level or a more severe one. */
  log(level: McpLogLevel, data: unknown, logger?: string): Promise<void>;
  /** Reports progress, if the client sent a progress token. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * Asks the user for input through the client (form mode elicitation); needs the client's
   * `elicitation` capability with form mode. `extra` adds request params; its `key` names the
   * input request instead. Rejects with `McpUnsupportedElicitationModeError` when the client
   * declared URL mode only.
   */
  elicit(
    message: string,
    requestedSchema: Record<string, unknown>,
    extra?: Record<string, unknown> & McpInputRequestOptions,
  ): Promise<McpElicitResult>;
  /**
   * Sends the user to a URL (URL mode elicitation) and resolves with the client's answer and the
   * elicitation's id. Rejects with `McpUnsupportedElicitationModeError` when the client did not
   * declare URL mode. On a 2025 session, tell the client when the interaction is over with
   * `McpElicitationNotifier.complete`.
   */
  elicit(request: McpUrlElicitation): Promise<McpUrlElicitResult>;
  /**
   * Asks the client's model for a completion (sampling/createMessage); needs the `sampling`
   * capability. `params.tools` and `params.toolChoice` (tool use, 2025-11-25 and later) need
   * `sampling.tools` as well: without it the call rejects with `McpUnsupportedSamplingToolsError`
   * and nothing is sent. The result may then hold `tool_use` content (`stopReason: 'toolUse'`).
   */
  sample(params: Record<string, unknown>, options?: McpInputRequestOptions): Promise<Record<string, unknown>>;
  /** Lists the client's roots; needs the `roots` capability. */
  listRoots(options?: McpInputRequestOptions): Promise<McpRoot[]>;
  /**
   * Where a tool declared with `inputBeforeTask: true` turns into a task. Before this call, on a
   * 2026-07-28 request that declares the tasks extension, the handler runs with the `tools/call`
   * itself and its `elicit` / `sample` / `listRoots` are `input_required` rounds of that call
   * (answered before any task exists); this call then creates the task, the client gets its
   * `CreateTaskResult`, and the task's worker runs the handler again from the start, the answers
   * of those rounds handed back to the same requests (same keys), so keep the code before it free
   * of side effects. Resolves at once when the call already runs as a task (2025-11-25 creates
   * it before the handler starts) or runs without one (a client without the extension calling an
   * `'optional'` tool): the handler goes on either way.
   */
  startTask(): Promise<void>;
}

/** One content block of a tool result. */
export type McpContent =
  | { type: 'text'; text: string; annotations?: Record<string, unknown>; _meta?: Record<string, unknown> }
  | {
      type: 'image';
      data: string;
      mimeType: string;
      annotations?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    }
  | {
      type: 'audio';
      data: string;
      mimeType: string;
      annotations?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    }
  | {
      type: 'resource_link';
      uri: string;
      name: string;
      mimeType?: string;
      description?: string;
      [key: string]: unknown;
    }
  | {
      type: 'resource';
      resource: Record<string, unknown>;
      annotations?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    };

/** A complete `tools/call` result. */
export interface McpCallToolResult {
  /** The content blocks of the result. */
  content: McpContent[];
  /** The result as an object, checked against the tool's `outputSchema` when it has one. */
  structuredContent?: Record<string, unknown>;
  /** True when the tool failed: the content says why, to the model. */
  isError?: boolean;
  /** Metadata the protocol reserves for extensions (`_meta`). */
  _meta?: Record<string, unknown>;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/**
 * What a tool handler may return: a string (one text block), an array of content blocks, a full
 * `CallToolResult` (recognised by its `content` array), or, for a tool with `output`, the
 * structured object itself.
 */
export type McpToolReturn = string | McpContent[] | McpCallToolResult | Record<string, unknown>;

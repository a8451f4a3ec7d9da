import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { MCP_LOG_LEVELS, type McpLogLevel } from '../../protocol/log-levels';
import { randomUUID } from 'node:crypto';
import type {
  McpElicitResult,
  McpInputRequestOptions,
  McpRoot,
  McpToolContext,
  McpUrlElicitation,
  McpUrlElicitResult,
} from '../../interfaces/mcp-tool-context.interface';
import { McpUnsupportedElicitationModeError } from '../../errors/mcp-elicitation.errors';
import { declaredElicitationModes, type McpElicitationMode } from '../../protocol/elicitation';
import { McpUnsupportedSamplingToolsError } from '../../errors/mcp-sampling.errors';
import { declaresSamplingTools, samplingToolParams } from '../../protocol/sampling';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { McpRequestEndedError } from '../../errors/mcp-client-request.errors';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { methodFacts } from '../../protocol/method-catalog';
import { StatelessErrorCode, isStatelessVersion } from '../../protocol/stateless';
import { LazyAbort } from './lazy-abort';

/** True when `level` is at least as severe as `minimum`. */
export function isLogLevelEnabled(level: McpLogLevel, minimum: McpLogLevel | null | undefined): boolean {
  return !!minimum && MCP_LOG_LEVELS.indexOf(level) >= MCP_LOG_LEVELS.indexOf(minimum);
}

/** True when `value` is an MCP log level. */
export function isLogLevel(value: unknown): value is McpLogLevel {
  return typeof value === 'string' && (MCP_LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * Refuses a server->client request the client cannot receive: there is no channel back, or the
 * client did not declare the capability the method catalog says it needs.
 */
function requireCapability(context: McpDeliveryContext, method: string): void {
  const capability = methodFacts(method)?.capability?.name;
  if (!context.client) {
    throw new McpRpcError(
      StatelessErrorCode.MissingRequiredClientCapability,
      `Cannot send ${method}: this request has no channel back to the client`,
    );
  }
  if (capability !== undefined && (!context.clientCapabilities || !(capability in context.clientCapabilities))) {
    throw new McpRpcError(
      StatelessErrorCode.MissingRequiredClientCapability,
      `The client did not declare the "${capability}" capability that ${method} needs`,
      {
        requiredCapabilities: { [capability]: {} },
      },
    );
  }
}

/** Refuses an elicitation in a mode the client did not declare (after `requireCapability`). */
function requireElicitationMode(context: McpDeliveryContext, mode: McpElicitationMode): void {
  if (!declaredElicitationModes(context.clientCapabilities).includes(mode))
    throw new McpUnsupportedElicitationModeError(mode);
}

/** A URL elicitation's fields, checked: the handler's mistakes surface in the handler. */
function checkUrlElicitation(request: McpUrlElicitation): void {
  for (const field of ['url', 'message'] as const) {
    if (typeof request[field] !== 'string' || request[field] === '')
      throw new TypeError(`A URL elicitation needs a non-empty string "${field}"`);
  }
  if (!URL.canParse(request.url))
    throw new TypeError(`The url of a URL elicitation must be an absolute URL (got ${JSON.stringify(request.url)})`);
  if (
    request.elicitationId !== undefined &&
    (typeof request.elicitationId !== 'string' || request.elicitationId === '')
  ) {
    throw new TypeError('The elicitationId of a URL elicitation must be a non-empty string');
  }
}

/**
 * The context a handler receives for one request: identity, cancellation, and the
 * revision-independent way back to the client (log, progress, elicit, sample, listRoots). It is
 * built for every call on the hot path, so the methods are bound only when a handler reads them
 * (destructuring `{ log }` works), and its `signal` is made only when read: it is an own,
 * enumerable getter, so a spread copy of the context (`{ ...ctx }`) still has a signal.
 */
class McpHandlerContext implements McpToolContext {
  private ended = false;
  private bound?: Partial<Pick<McpToolContext, 'log' | 'progress' | 'elicit' | 'sample' | 'listRoots' | 'startTask'>>;

  readonly principal: McpToolContext['principal'];
  readonly sessionId: string | null;
  readonly protocolVersion: string;
  readonly requestId: string | number;
  readonly meta?: Record<string, unknown>;
  readonly task?: McpToolContext['task'];
  readonly round?: McpToolContext['round'];
  declare readonly signal: AbortSignal;

  constructor(
    readonly mount: string,
    request: JsonRpcRequest,
    private readonly delivery: McpDeliveryContext,
    private readonly abort: LazyAbort,
  ) {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- a getter: called with the context as `this`
    Object.defineProperty(this, 'signal', { get: McpHandlerContext.readSignal, enumerable: true });
    this.principal = delivery.principal;
    this.sessionId = delivery.sessionId;
    this.protocolVersion = delivery.protocolVersion;
    this.requestId = request.id;
    this.meta = request.params?._meta as Record<string, unknown> | undefined;
    if (delivery.task) this.task = delivery.task;
    if (delivery.client?.round) this.round = delivery.client.round;
  }

  /** The `signal` getter of every handler context (one function for all): the signal is made when read. */
  private static readSignal(this: McpHandlerContext): AbortSignal {
    return this.abort.signal;
  }

  // Each getter hands its method to `bind`, which binds it to this context (once) before it leaves.
  /* eslint-disable @typescript-eslint/unbound-method -- bound in `bind` */
  get log(): McpToolContext['log'] {
    return this.bind('log', this.doLog);
  }

  get progress(): McpToolContext['progress'] {
    return this.bind('progress', this.doProgress);
  }

  get elicit(): McpToolContext['elicit'] {
    return this.bind('elicit', this.doElicit);
  }

  get sample(): McpToolContext['sample'] {
    return this.bind('sample', this.doSample);
  }

  get listRoots(): McpToolContext['listRoots'] {
    return this.bind('listRoots', this.doListRoots);
  }

  get startTask(): McpToolContext['startTask'] {
    return this.bind('startTask', this.doStartTask);
  }
  /* eslint-enable @typescript-eslint/unbound-method */

  /** Marks the request answered: from now on every way back to the client rejects. */
  end(): void {
    this.ended = true;
  }

  private bind<K extends keyof NonNullable<McpHandlerContext['bound']>>(
    name: K,
    method: (...args: never[]) => unknown,
  ): NonNullable<McpToolContext[K]> {
    this.bound ??= {};
    return (this.bound[name] ??= method.bind(this) as NonNullable<McpHandlerContext['bound']>[K]) as NonNullable<
      McpToolContext[K]
    >;
  }

  private async doLog(level: McpLogLevel, data: unknown, logger?: string): Promise<void> {
    this.requireOpen('log');
    if (isLogLevelEnabled(level, this.delivery.logLevel))
      await this.notify(McpMethod.LoggingMessage, logger ? { level, logger, data } : { level, data });
  }

  private async doProgress(progress: number, total?: number, message?: string): Promise<void> {
    this.requireOpen('progress');
    const progressToken = this.meta?.progressToken;
    if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return;
    await this.notify(McpMethod.Progress, {
      progressToken,
      progress,
      ...(total !== undefined ? { total } : {}),
      ...(message ? { message } : {}),
    });
  }

  private async doElicit(
    first: string | McpUrlElicitation,
    requestedSchema?: Record<string, unknown>,
    extra?: Record<string, unknown> & McpInputRequestOptions,
  ): Promise<McpElicitResult | McpUrlElicitResult> {
    this.requireOpen('elicit');
    if (typeof first === 'object' && first !== null && first.mode === 'url') return this.elicitUrl(first);
    const { key, ...params } = extra ?? {};
    return (await this.ask(
      McpMethod.ElicitationCreate,
      { mode: 'form', message: first, requestedSchema, ...params },
      { key },
      'form',
    )) as McpElicitResult;
  }

  private async elicitUrl(request: McpUrlElicitation): Promise<McpUrlElicitResult> {
    checkUrlElicitation(request);
    const { url, message, key } = request;
    const elicitationId = request.elicitationId ?? randomUUID();
    // The stateless revision's URL elicitation has no id: the retry carries what the server needs.
    const params = isStatelessVersion(this.protocolVersion)
      ? { mode: 'url', message, url }
      : { mode: 'url', message, url, elicitationId };
    const result = (await this.ask(McpMethod.ElicitationCreate, params, { key }, 'url')) as McpElicitResult;
    return { ...result, elicitationId };
  }

  private async doSample(
    params: Record<string, unknown>,
    options?: McpInputRequestOptions,
  ): Promise<Record<string, unknown>> {
    this.requireOpen('sample');
    // Like URL mode: a client without sampling lacks its tools too, so a tool catches one error class.
    const toolParams = samplingToolParams(params);
    if (toolParams.length && this.delivery.client && !declaresSamplingTools(this.delivery.clientCapabilities))
      throw new McpUnsupportedSamplingToolsError(toolParams);
    return this.ask(McpMethod.SamplingCreateMessage, params, options);
  }

  private async doListRoots(options?: McpInputRequestOptions): Promise<McpRoot[]> {
    this.requireOpen('listRoots');
    const result = await this.ask(McpMethod.RootsList, {}, options);
    return (Array.isArray(result.roots) ? result.roots : []) as McpRoot[];
  }

  private async doStartTask(): Promise<void> {
    this.requireOpen('startTask');
    this.delivery.beginTask?.();
  }

  /** The methods are async, so this surfaces as a rejection of the call, never as a throw elsewhere. */
  private requireOpen(operation: string): void {
    if (this.ended) throw new McpRequestEndedError(operation, this.requestId);
  }

  private async notify(method: string, params: Record<string, unknown>): Promise<void> {
    if (this.delivery.notify && !this.abort.aborted) await this.delivery.notify({ jsonrpc: '2.0', method, params });
  }

  private async ask(
    method: string,
    params: Record<string, unknown>,
    options?: McpInputRequestOptions,
    mode?: McpElicitationMode,
  ): Promise<Record<string, unknown>> {
    // A client without any elicitation lacks URL mode too: the tool catches one error class for it.
    if (mode === 'url' && this.delivery.client) requireElicitationMode(this.delivery, mode);
    requireCapability(this.delivery, method);
    if (mode !== undefined) requireElicitationMode(this.delivery, mode);
    const client = this.delivery.client as NonNullable<McpDeliveryContext['client']>;
    return options?.key === undefined
      ? client.request(method, params)
      : client.request(method, params, { key: options.key });
  }
}

/** A handler context with the switch its request flips once answered. */
export type McpEndableToolContext = McpToolContext & {
  /** Marks the request answered: later calls of the context's methods reject with `McpRequestEndedError`. */
  end(): void;
};

/**
 * Builds the context a handler receives for one request; its `signal` is `abort`'s (a plain
 * `AbortSignal` is followed).
 */
export function createHandlerContext(
  mount: string,
  request: JsonRpcRequest,
  context: McpDeliveryContext,
  abort: LazyAbort | AbortSignal,
): McpEndableToolContext {
  return new McpHandlerContext(mount, request, context, abort instanceof LazyAbort ? abort : LazyAbort.follow(abort));
}

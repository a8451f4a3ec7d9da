import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { isSupportedSessionVersion } from '../../protocol/revisions';
import { PagedList } from './paged-list';
import type { MethodInvoker } from './registered-features';
import type { HandlerPipeline } from '../pipeline/handler-pipeline';
import { McpRefusedError, refusalNote } from '../pipeline/handler-refusal';
import { executionInfoOf, type McpExecutionInfo, type McpHandlerKind } from '../pipeline/mcp-execution-context';
import type { HandlerSwitches } from '../pipeline/handler-switches';

/** What a feature publishes about one handler, to evaluate its guards. */
export interface GuardedEntry {
  /** The published definition. */
  definition: Readonly<Record<string, unknown>>;
  /** The handler's Nest enhancers, when it has any. */
  pipeline?: HandlerPipeline;
}

/** How a refused call answers: the error of a handler that does not exist. */
export type RefusalFactory = (info: McpExecutionInfo, note: string) => McpRefusedError;

/**
 * A handler invoker that runs the guards first (a refusal throws what `refuse` builds: the
 * feature's "not found", with the guard in the audit note; a guard's own `McpRpcError`
 * propagates), then interceptors, pipes, the method and filters.
 */
export function guardedInvoker(
  pipeline: HandlerPipeline,
  kind: McpHandlerKind,
  name: string,
  method: string,
  refuse: RefusalFactory,
  /** Checks the arguments once the guards let the call through (so a refused caller learns nothing from them). */
  validate?: (argument: unknown) => Promise<unknown>,
): MethodInvoker {
  return async (raw, context) => {
    let argument = raw;
    const info: McpExecutionInfo = {
      ...executionInfoOf('call', method, kind, name, context),
      arguments: argument,
      handlerContext: context,
    };
    const prepared = await pipeline.prepare(context);
    const verdict = await prepared.authorize(info);
    if (!verdict.allowed) {
      if (verdict.error instanceof McpRpcError) throw verdict.error;
      throw refuse(info, refusalNote(`${kind} "${name}"`, verdict.guard, verdict.error));
    }
    if (validate) info.arguments = argument = await validate(argument);
    return prepared.run(argument, context, info);
  };
}

/**
 * True when the guards of a handler let the caller see it (a list, a completion, a subscription):
 * evaluated with a list-time context (`phase: 'list'`).
 */
export async function isVisibleTo(
  pipeline: HandlerPipeline | undefined,
  method: string,
  kind: McpHandlerKind,
  name: string,
  context: McpDeliveryContext,
): Promise<boolean> {
  if (!pipeline?.mayRefuse) return true;
  const info = executionInfoOf('list', method, kind, name, context);
  return (await (await pipeline.prepare(info)).authorize(info)).allowed;
}

/**
 * A list (`prompts/list`, `resources/list`...) that leaves out, per caller, the entries whose
 * guards refuse it, evaluated with a list-time context. Without guards the pages are computed
 * once at boot.
 */
export class GuardedList<T extends GuardedEntry> {
  private readonly shared: PagedList | null;

  constructor(
    private readonly key: string,
    private readonly entries: readonly T[],
    private readonly pageSize: number,
    private readonly method: string,
    private readonly describe: (entry: T) => { kind: McpHandlerKind; name: string },
    /** Handlers switched off at run time (`McpRegistry`): while some are, lists are computed per caller. */
    private readonly switches?: HandlerSwitches,
  ) {
    this.shared = entries.some((entry) => entry.pipeline?.mayRefuse)
      ? null
      : new PagedList(
          key,
          entries.map((entry) => entry.definition),
          pageSize,
        );
  }

  /** One page of what the caller may see; a stateless page that depends on the caller is `cacheScope: 'private'`. */
  async page(cursor: unknown, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    if (this.shared && !this.switches?.active) return this.shared.page(cursor);
    const visible = await Promise.all(this.entries.map((entry) => this.visible(entry, context)));
    const page = new PagedList(
      this.key,
      this.entries.filter((_, index) => visible[index]).map((entry) => entry.definition),
      this.pageSize,
    ).page(cursor);
    return isSupportedSessionVersion(context.protocolVersion) ? page : { ...page, cacheScope: 'private' };
  }

  private async visible(entry: T, context: McpDeliveryContext): Promise<boolean> {
    const { kind, name } = this.describe(entry);
    if (this.switches && !this.switches.allows(kind, name, context.principal)) return false;
    return isVisibleTo(entry.pipeline, this.method, kind, name, context);
  }
}

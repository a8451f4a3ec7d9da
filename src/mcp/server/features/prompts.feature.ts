import { Inject, Injectable } from '@nestjs/common';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { duplicatePromptMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { Toolset } from '../dispatch/toolset';
import { invalidParams, requireStringParam, runFeatureHandler } from './feature-handler';
import { GuardedList } from './guarded-handlers';
import { McpRefusedError, refusalNote } from '../pipeline/handler-refusal';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { toGetPromptResult } from './prompt-result-mapper';
import type { RegisteredPrompt } from './registered-features';
import { HandlerCatalog } from '../pipeline/handler-catalog';

/** The prompts of one mount: `prompts/list` and `prompts/get`. */
@Injectable()
export class PromptsFeature {
  private readonly prompts = new HandlerCatalog<RegisteredPrompt>(
    (prompt) => prompt.name,
    (name, first, second) => duplicatePromptMessage(this.options.mount, name, first, second),
    () => this.rebuild(),
  );
  private list: GuardedList<RegisteredPrompt> | null = null;

  constructor(
    private readonly toolset: Toolset,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Adds a prompt; a second one of the same name is a boot error naming both owners. */
  add(prompt: RegisteredPrompt): void {
    this.prompts.add(prompt);
  }

  /** Removes a prompt (`McpRegistry`); false when there was none of that name. */
  remove(name: string): boolean {
    return this.prompts.remove(name) !== undefined;
  }

  /** True once the prompt methods are served. */
  get installed(): boolean {
    return this.list !== null;
  }

  /** The prompt of this name, if any. */
  find(name: string): RegisteredPrompt | undefined {
    return this.prompts.get(name);
  }

  /** True when no prompt was registered. */
  get isEmpty(): boolean {
    return !this.prompts.size;
  }

  /**
   * Computes the list, starts serving the prompt methods and announces the `prompts` capability
   * (with `listChanged`: `McpRegistry` may change the list). Installing twice does nothing more.
   */
  install(): void {
    if (this.list) return;
    this.toolset.declareCapability('prompts', { listChanged: true });
    this.list = this.buildList();
    this.toolset.handle(McpMethod.PromptsList, (request, context) =>
      (this.list as GuardedList<RegisteredPrompt>).page(request.params?.cursor, context),
    );
    this.toolset.handle(McpMethod.PromptsGet, (request, context) => this.get(request, context));
  }

  private buildList(): GuardedList<RegisteredPrompt> {
    return new GuardedList(
      'prompts',
      [...this.prompts.values()],
      this.options.pageSize,
      McpMethod.PromptsList,
      (p) => ({ kind: 'prompt', name: p.name }),
      this.toolset.switches,
    );
  }

  private rebuild(): void {
    if (this.list) this.list = this.buildList();
  }

  private async get(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const name = requireStringParam(request, 'name');
    const prompt = this.prompts.get(name);
    if (!prompt) throw invalidParams(`Unknown prompt: ${name}`);
    if (!this.toolset.switches.allows('prompt', name, context.principal)) {
      throw new McpRefusedError(
        JsonRpcErrorCode.InvalidParams,
        `Unknown prompt: ${name}`,
        refusalNote(`prompt "${name}"`, 'McpRegistry', new Error('disabled')),
      );
    }
    const description = prompt.definition.description as string | undefined;
    // A guarded prompt checks its arguments after its guards (see `guardedInvoker`).
    if (prompt.pipeline) {
      return runFeatureHandler(this.toolset, request, context, async (handlerContext) =>
        toGetPromptResult(await prompt.get(request.params?.arguments, handlerContext), description),
      );
    }
    const outcome = await prompt.validateArguments(request.params?.arguments);
    if (!outcome.ok) throw invalidParams(`Invalid arguments for prompt "${name}": ${outcome.message}`);
    return runFeatureHandler(this.toolset, request, context, async (handlerContext) =>
      toGetPromptResult(await prompt.get(outcome.value, handlerContext), description),
    );
  }
}

import { Injectable } from '@nestjs/common';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { Toolset } from '../toolset';
import { NO_COMPLETION, completionArguments, toCompletion } from './completion-values';
import { invalidParams, runFeatureHandler } from './feature-handler';
import { PromptsFeature } from './prompts.feature';
import type { ResolvedCompleters } from './registered-features';
import { ResourcesFeature } from './resources.feature';
import { isVisibleTo } from '../pipeline/guarded-handlers';

type Loose = Record<string, unknown>;

function asObject(value: unknown, what: string): Loose {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidParams(`Invalid params: ${McpMethod.CompletionComplete} needs an object "${what}"`);
  return value as Loose;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalidParams(`Invalid params: ${McpMethod.CompletionComplete} needs a string "${what}"`);
  return value;
}

/**
 * `completion/complete` for prompt arguments (`ref/prompt`) and resource template variables
 * (`ref/resource`, by template string). An argument without a completer gets no suggestion; an
 * unknown prompt or template is -32602.
 */
@Injectable()
export class CompletionFeature {
  constructor(
    private readonly toolset: Toolset,
    private readonly prompts: PromptsFeature,
    private readonly resources: ResourcesFeature,
  ) {}

  /** Starts serving `completion/complete` and announces the `completions` capability. */
  install(): void {
    this.toolset.declareCapability('completions', {});
    this.toolset.handle(McpMethod.CompletionComplete, (request, context) => this.complete(request, context));
  }

  private async complete(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const ref = asObject(request.params?.ref, 'ref');
    const argument = asObject(request.params?.argument, 'argument');
    const name = asString(argument.name, 'argument.name');
    const value = asString(argument.value, 'argument.value');
    const completer = (await this.completersOf(ref, context)).get(name);
    if (!completer) return { completion: NO_COMPLETION };
    const args = completionArguments(request.params?.context);
    const completion = await runFeatureHandler(this.toolset, request, context, async (handlerContext) =>
      toCompletion(await completer(value, { ...handlerContext, arguments: args })),
    );
    return { completion };
  }

  /** The completers of the referenced prompt or template; one whose guards refuse the caller is unknown to it. */
  private async completersOf(ref: Loose, context: McpDeliveryContext): Promise<ResolvedCompleters> {
    const method = McpMethod.CompletionComplete;
    if (ref.type === 'ref/prompt') {
      const name = asString(ref.name, 'ref.name');
      const prompt = this.prompts.find(name);
      if (!prompt || !(await isVisibleTo(prompt.pipeline, method, 'prompt', name, context))) throw invalidParams(`Unknown prompt: ${name}`);
      return prompt.completers;
    }
    if (ref.type === 'ref/resource') {
      const uri = asString(ref.uri, 'ref.uri');
      const template = this.resources.findTemplate(uri);
      if (!template || !(await isVisibleTo(template.pipeline, method, 'resourceTemplate', uri, context))) throw invalidParams(`Unknown resource template: ${uri}`);
      return template.completers;
    }
    throw invalidParams(`Invalid params: ref.type must be "ref/prompt" or "ref/resource"`);
  }
}

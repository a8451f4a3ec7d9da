import { Injectable } from '@nestjs/common';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { Toolset } from '../dispatch/toolset';
import { NO_COMPLETION, completionArguments, toCompletion } from './completion-values';
import { invalidParams, runFeatureHandler } from './feature-handler';
import { PromptsFeature } from './prompts.feature';
import type { ResolvedCompleters } from './registered-features';
import { ResourcesFeature } from './resources.feature';
import { isVisibleTo } from './guarded-handlers';
import { McpRefusedError, refusalNote } from '../pipeline/handler-refusal';

type Loose = Record<string, unknown>;

function asObject(value: unknown, what: string): Loose {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw invalidParams(`Invalid params: ${McpMethod.CompletionComplete} needs an object "${what}"`);
  return value as Loose;
}

/** The answer for a handler switched off for the caller: that of an unknown one, the switch named in the audit note only. */
function switchedOff(message: string, what: string): McpRefusedError {
  return new McpRefusedError(
    JsonRpcErrorCode.InvalidParams,
    message,
    refusalNote(what, 'McpRegistry', new Error('disabled')),
  );
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw invalidParams(`Invalid params: ${McpMethod.CompletionComplete} needs a string "${what}"`);
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

  /**
   * The completers of the referenced prompt or template. One the caller may not use (switched off
   * for it or for everyone by `McpRegistry`, or refused by its guards) is unknown to it: the same
   * -32602 as a name that does not exist, its completers never run.
   */
  private async completersOf(ref: Loose, context: McpDeliveryContext): Promise<ResolvedCompleters> {
    const method = McpMethod.CompletionComplete;
    if (ref.type === 'ref/prompt') {
      const name = asString(ref.name, 'ref.name');
      const prompt = this.prompts.find(name);
      const unknown = `Unknown prompt: ${name}`;
      if (!prompt) throw invalidParams(unknown);
      if (!this.toolset.switches.allows('prompt', name, context.principal))
        throw switchedOff(unknown, `prompt "${name}"`);
      if (!(await isVisibleTo(prompt.pipeline, method, 'prompt', name, context))) throw invalidParams(unknown);
      return prompt.completers;
    }
    if (ref.type === 'ref/resource') {
      const uri = asString(ref.uri, 'ref.uri');
      const template = this.resources.findTemplate(uri);
      const unknown = `Unknown resource template: ${uri}`;
      if (!template) throw invalidParams(unknown);
      if (!this.toolset.switches.allows('resourceTemplate', uri, context.principal))
        throw switchedOff(unknown, `resource template "${uri}"`);
      if (!(await isVisibleTo(template.pipeline, method, 'resourceTemplate', uri, context)))
        throw invalidParams(unknown);
      return template.completers;
    }
    throw invalidParams(`Invalid params: ref.type must be "ref/prompt" or "ref/resource"`);
  }
}

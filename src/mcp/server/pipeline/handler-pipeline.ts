import type { CanActivate, PipeTransform, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants';
import { ContextIdFactory, type ExternalContextCreator, type ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { STATIC_CONTEXT } from '@nestjs/core/injector/constants';
import type { ContextId, InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { PipesConsumer } from '@nestjs/core/pipes/pipes-consumer';
import { isObservable, lastValueFrom } from 'rxjs';
import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { MCP_CONTEXT_TYPE, type McpExecutionInfo } from './mcp-execution-context';

/** The discovered provider method a pipeline runs (a `ProviderMethod` of the explorers). */
export interface PipelineTarget {
  /** The provider's wrapper (scope, token, host module). */
  wrapper: InstanceWrapper;
  /** The class the method belongs to. */
  type: Type<unknown>;
  /** The instance discovery found. */
  instance: Record<string, unknown>;
  /** The method's name. */
  methodName: string;
  /** `Class#method`, for messages. */
  owner: string;
}

/** What the guards of a handler decided. `guard` names the one that refused (its class name). */
export type McpGuardVerdict = { allowed: true } | { allowed: false; guard: string; error?: unknown };

const ALLOWED: McpGuardVerdict = Object.freeze({ allowed: true });

/** A handler method, as Nest's context creators and metadata readers take it. */
type HandlerFunction = (...args: never[]) => unknown;

/** The parts of Nest's machinery `ExternalContextCreator` keeps to itself and the pipeline reuses. */
interface CreatorInternals {
  guardsContextCreator: {
    create(
      instance: object,
      callback: HandlerFunction,
      module: string,
      contextId?: ContextId,
      inquirerId?: string,
    ): CanActivate[];
  };
  pipesContextCreator: {
    create(
      instance: object,
      callback: HandlerFunction,
      module: string,
      contextId?: ContextId,
      inquirerId?: string,
    ): PipeTransform[];
  };
}

/** One resolution of a handler: the instance, its guards and the enhanced callable. */
interface PipelineParts {
  type: Type<unknown>;
  handler: HandlerFunction;
  guards: CanActivate[];
  run: (...args: unknown[]) => Promise<unknown>;
}

const pipesConsumer = new PipesConsumer();

/** True when the class or the method carries `@UseGuards`, `@UseInterceptors`, `@UsePipes` or `@UseFilters`. */
export function hasEnhancers(type: Type<unknown>, handler: HandlerFunction): boolean {
  return [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA].some((key) => {
    const own = (Reflect.getMetadata(key, type) as unknown[] | undefined)?.length;
    return !!own || !!(Reflect.getMetadata(key, handler) as unknown[] | undefined)?.length;
  });
}

/** The name an audit row gives a guard: its class name. */
function guardName(guard: CanActivate): string {
  return guard.constructor?.name || 'AnonymousGuard';
}

/**
 * Runs one MCP handler through Nest's pipeline, as a controller method runs: guards, then
 * interceptors, then pipes (on the arguments), then the method; exception filters see what
 * interceptors and the method throw. The context type is `'mcp'` (see `getMcpContext`). Built at
 * boot, and only for handlers with enhancers of their own or built-in guards (`public` on a mount
 * that admits anonymous callers): others keep the direct call. The built-in guards run before
 * the handler's own. A handler with built-in guards only runs them and then the direct call, so
 * the app's global enhancers stay out of its calls as they do for any handler without enhancers.
 * For a static provider everything is resolved once; a request-scoped one (or one with a
 * request-scoped enhancer) is resolved per request, with the handler context as the request.
 */
export class HandlerPipeline {
  private staticParts?: PipelineParts;
  private readonly enhanced: boolean;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly creator: ExternalContextCreator,
    private readonly method: PipelineTarget,
    private readonly builtInGuards: readonly CanActivate[] = [],
  ) {
    this.enhanced = hasEnhancers(method.type, method.instance[method.methodName] as HandlerFunction);
    if (method.wrapper.isDependencyTreeStatic()) this.staticParts = this.build(method.instance, STATIC_CONTEXT);
  }

  /** True when some guard may refuse (a request-scoped resolution counts: its guards are known per request). */
  get mayRefuse(): boolean {
    return !this.staticParts || this.staticParts.guards.length > 0;
  }

  /**
   * Resolves the handler for one request (`request` is what `@Inject(REQUEST)` receives:
   * the handler context of a call, the execution info of a list).
   */
  async prepare(request: McpToolContext | McpExecutionInfo): Promise<PreparedHandler> {
    if (this.staticParts) return new PreparedHandler(this.staticParts);
    const contextId = ContextIdFactory.create();
    this.moduleRef.registerRequestByContextId(request, contextId);
    let instance: Record<string, unknown>;
    try {
      instance = await this.moduleRef.resolve(this.method.wrapper.token, contextId, { strict: false });
    } catch (error) {
      throw new McpInfrastructureError(
        `Could not resolve the request-scoped provider of ${this.method.owner}: ${(error as Error)?.message}`,
        { cause: error },
      );
    }
    return new PreparedHandler(this.build(instance, contextId, this.method.wrapper.id));
  }

  private build(instance: Record<string, unknown>, contextId: ContextId, inquirerId?: string): PipelineParts {
    const { methodName } = this.method;
    const original = instance[methodName] as (...args: unknown[]) => unknown;
    if (!this.enhanced) {
      const direct = async (args: unknown, context: McpToolContext) => original.call(instance, args, context);
      return {
        type: this.method.type,
        handler: original,
        guards: [...this.builtInGuards],
        run: direct as PipelineParts['run'],
      };
    }
    const internals = this.creator as unknown as CreatorInternals;
    const moduleKey = (this.method.wrapper.host as { token?: string } | undefined)?.token ?? '';
    const pipes = internals.pipesContextCreator.create(instance, original, moduleKey, contextId, inquirerId);
    const metatype = (
      Reflect.getMetadata('design:paramtypes', instance, methodName) as Type<unknown>[] | undefined
    )?.[0];
    // Pipes see the arguments only (never the handler context), as `@Body()` would on a controller.
    const handler = async function (this: unknown, args: unknown, context: McpToolContext, info?: McpExecutionInfo) {
      const piped: unknown = pipes.length
        ? await pipesConsumer.apply(args, { type: 'body', metatype, data: undefined }, pipes)
        : args;
      if (info && piped !== args) info.arguments = piped;
      return original.call(this, piped, context);
    };
    for (const key of Reflect.getMetadataKeys(original))
      Reflect.defineMetadata(key, Reflect.getMetadata(key, original), handler);
    Object.defineProperty(handler, 'name', { value: methodName });
    const guards = [
      ...this.builtInGuards,
      ...internals.guardsContextCreator.create(instance, handler, moduleKey, contextId, inquirerId),
    ];
    const run = this.creator.create(
      instance,
      handler as (...args: unknown[]) => unknown,
      methodName,
      undefined,
      undefined,
      contextId,
      inquirerId,
      { guards: false, interceptors: true, filters: true },
      MCP_CONTEXT_TYPE,
    );
    return { type: this.method.type, handler, guards, run: run as PipelineParts['run'] };
  }
}

/** A handler resolved for one request: ask its guards, then run it. */
export class PreparedHandler {
  /** @internal */
  constructor(private readonly parts: PipelineParts) {}

  /** Runs the guards in order; the first that returns false or throws refuses. */
  async authorize(info: McpExecutionInfo): Promise<McpGuardVerdict> {
    const { guards, handler, type } = this.parts;
    if (!guards.length) return ALLOWED;
    const host = new ExecutionContextHost([info.arguments, info.handlerContext, info], type, handler);
    host.setType(MCP_CONTEXT_TYPE);
    for (const guard of guards) {
      try {
        let outcome: unknown = guard.canActivate(host);
        if (isObservable(outcome)) outcome = await lastValueFrom(outcome);
        if (!(await outcome)) return { allowed: false, guard: guardName(guard) };
      } catch (error) {
        return { allowed: false, guard: guardName(guard), error };
      }
    }
    return ALLOWED;
  }

  /** Runs interceptors, pipes, the method and filters. */
  run(args: unknown, context: McpToolContext, info: McpExecutionInfo): Promise<unknown> {
    return this.parts.run(args, context, info);
  }
}

/**
 * The pipeline of a discovered handler, or undefined when it needs none (no enhancers of its own
 * and no built-in guards): the explorers then keep the direct call.
 */
export function handlerPipelineFor(
  moduleRef: ModuleRef,
  creator: ExternalContextCreator,
  method: PipelineTarget,
  builtInGuards: readonly CanActivate[],
): HandlerPipeline | undefined {
  if (!builtInGuards.length && !hasEnhancers(method.type, method.instance[method.methodName] as HandlerFunction))
    return undefined;
  return new HandlerPipeline(moduleRef, creator, method, builtInGuards);
}

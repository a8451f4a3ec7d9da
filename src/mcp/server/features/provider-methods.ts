import { Logger, type Type } from '@nestjs/common';
import { ContextIdFactory, type DiscoveryService, type MetadataScanner, type ModuleRef } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { MethodInvoker } from './registered-features';

/** One method of a discovered provider. */
export interface ProviderMethod {
  /** The provider's wrapper (scope, token). */
  wrapper: InstanceWrapper;
  /** The class the method belongs to. */
  type: Type<unknown>;
  /** The instance discovery found (static providers serve from it). */
  instance: Record<string, unknown>;
  /** The method's name. */
  methodName: string;
  /** `Class#method`, for messages. */
  owner: string;
}

/**
 * Every method of the app's providers (or of `selected` ones), skipping wrappers without an
 * instance or with a null prototype; `useValue`/`useFactory` providers count as their
 * instance's class.
 */
export function* providerMethods(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  selected: readonly unknown[] | undefined,
): Generator<ProviderMethod> {
  const only = selected ? new Set<unknown>(selected) : null;
  for (const wrapper of discovery.getProviders()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object' || !Object.getPrototypeOf(instance)) continue;
    const type = (wrapper.metatype && !wrapper.inject ? wrapper.metatype : instance.constructor) as Type<unknown>;
    if (only && !only.has(type) && !only.has(instance.constructor)) continue;
    for (const methodName of scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
      yield { wrapper, type, instance, methodName, owner: `${type.name || 'AnonymousProvider'}#${methodName}` };
    }
  }
}

/**
 * Calls `methodName` of a discovered provider with `(argument, context)`: on the discovered
 * instance for static providers, on an instance resolved per call for request-scoped ones (the
 * context is registered as the request).
 */
export function createMethodInvoker(
  moduleRef: ModuleRef,
  method: ProviderMethod,
  methodName: string,
  logger: Logger,
  scopedMessage: string,
): MethodInvoker {
  const { wrapper, owner } = method;
  if (wrapper.isDependencyTreeStatic()) {
    const instance = wrapper.instance as Record<string, (...args: unknown[]) => unknown>;
    return async (argument, context) => instance[methodName](argument, context);
  }
  if (scopedMessage) logger.log(scopedMessage);
  return async (argument: unknown, context: McpToolContext) => {
    const contextId = ContextIdFactory.create();
    moduleRef.registerRequestByContextId(context, contextId);
    let instance: Record<string, (...a: unknown[]) => unknown>;
    try {
      instance = await moduleRef.resolve(wrapper.token, contextId, { strict: false });
    } catch (error) {
      throw new McpInfrastructureError(
        `Could not resolve the request-scoped provider of ${owner}: ${(error as Error)?.message}`,
        { cause: error },
      );
    }
    return instance[methodName](argument, context);
  };
}

import { Inject, Injectable, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef } from '@nestjs/core';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { JsonSchema, McpToolMetadata } from '../interfaces/mcp-tool-options.interface';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import {
  invalidMcpHeaderMessage,
  invalidSchemaMessage,
  invalidToolNameMessage,
  publicRestrictedMessage,
  requestScopedToolMessage,
} from '../mcp.messages';
import type { McpResolvedOptions } from './mcp.options';
import { TOOL_NAME_PATTERN } from '../protocol/mcp-methods';
import { createMethodInvoker, providerMethods, type ProviderMethod } from './features/provider-methods';
import { McpMetadataAccessor } from './mcp-metadata.accessor';
import { McpParamHeaderError, mcpParamHeadersOf } from './stateless/mcp-param-headers';
import { SCOPE_TOKEN } from './oauth/mcp-oauth.options';
import { handlerPipelineFor } from './pipeline/handler-pipeline';
import { builtInGuards, checkedPublic } from './pipeline/public-handlers';
import { checkedInputBeforeTask, checkedTaskSupport } from './tasks/task-support';
import { Toolset } from './toolset';
import { compileJsonSchema } from './tools/json-schema-validator';
import type { RegisteredTool } from './tools/registered-tool';
import { compileInputValidator, isDtoClass, toPublishedSchema } from './tools/tool-schema.factory';

/**
 * Finds the `@McpTool` methods of the app's providers when the app initializes and registers the
 * ones this mount serves in its `Toolset`, with schemas and validators compiled once.
 */
/** The `scopes` of `@McpTool`, checked at boot: scope names only, as they go into a challenge header. */
function checkedToolScopes(scopes: unknown, owner: string): readonly string[] {
  if (scopes === undefined) return [];
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))) {
    throw new McpConfigurationError(
      `@McpTool on ${owner}: scopes must be an array of scope names (printable ASCII without spaces, quotes or backslashes), got ${JSON.stringify(scopes)}`,
    );
  }
  return Object.freeze([...new Set(scopes as string[])]);
}

/** The `roles` of `@McpTool`, checked at boot: non-empty strings. */
function checkedToolRoles(roles: unknown, owner: string): readonly string[] {
  if (roles === undefined) return [];
  if (!Array.isArray(roles) || roles.some((role) => typeof role !== 'string' || !role)) {
    throw new McpConfigurationError(
      `@McpTool on ${owner}: roles must be an array of role names, got ${JSON.stringify(roles)}`,
    );
  }
  return Object.freeze([...new Set(roles as string[])]);
}

@Injectable()
export class ToolsetExplorer implements OnModuleInit {
  private readonly logger = new Logger(ToolsetExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly moduleRef: ModuleRef,
    private readonly toolset: Toolset,
    private readonly contextCreator: ExternalContextCreator,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Discovers and registers the tools. */
  onModuleInit(): void {
    for (const method of providerMethods(this.discovery, this.scanner, this.options.providers)) {
      const metadata = this.accessor.getToolMetadata(method.instance[method.methodName]);
      if (metadata) this.toolset.register(this.buildTool(method, metadata));
    }
  }

  private buildTool(method: ProviderMethod, metadata: McpToolMetadata): RegisteredTool {
    const { owner, methodName } = method;
    if (!TOOL_NAME_PATTERN.test(metadata.name)) {
      throw new McpConfigurationError(invalidToolNameMessage(metadata.name, owner));
    }
    const inputSchema = this.checkedSchema(metadata.input, owner, 'input');
    this.checkParamHeaders(inputSchema, owner, metadata.name);
    const outputSchema = metadata.output ? this.checkedSchema(metadata.output, owner, 'output') : undefined;
    const definition: Record<string, unknown> = {
      name: metadata.name,
      ...(metadata.title ? { title: metadata.title } : {}),
      description: metadata.description,
      inputSchema,
      ...(outputSchema ? { outputSchema } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
      ...(metadata.icons ? { icons: metadata.icons } : {}),
      ...(metadata.meta ? { _meta: metadata.meta } : {}),
      ...(metadata.task ? { execution: { taskSupport: checkedTaskSupport(metadata.task, owner) } } : {}),
    };
    const scopes = checkedToolScopes(metadata.scopes, owner);
    const roles = checkedToolRoles(metadata.roles, owner);
    const isPublic = checkedPublic('@McpTool', owner, metadata.public);
    if (isPublic && (scopes.length || roles.length)) {
      throw new McpConfigurationError(
        publicRestrictedMessage('@McpTool', owner, metadata.name, scopes.length ? 'scopes' : 'roles'),
      );
    }
    return {
      name: metadata.name,
      owner,
      scopes,
      roles,
      public: isPublic,
      pipeline: handlerPipelineFor(
        this.moduleRef,
        this.contextCreator,
        method,
        builtInGuards(this.options.anonymous, isPublic),
      ),
      definition: Object.freeze(definition),
      taskSupport: metadata.task,
      inputBeforeTask: checkedInputBeforeTask(metadata.inputBeforeTask, metadata.task, owner),
      idempotent: metadata.annotations?.idempotentHint === true,
      validateInput: compileInputValidator(metadata.input),
      validateOutput: outputSchema ? this.compile(outputSchema, owner, 'output') : undefined,
      invoke: createMethodInvoker(this.moduleRef, method, methodName, this.logger, requestScopedToolMessage(owner)),
    };
  }

  private checkedSchema(
    declared: Type<unknown> | JsonSchema | undefined,
    owner: string,
    which: 'input' | 'output',
  ): JsonSchema {
    const schema = toPublishedSchema(declared);
    if (schema.type !== 'object') {
      throw new McpConfigurationError(
        invalidSchemaMessage(owner, which, `its root type is ${JSON.stringify(schema.type)}, not "object"`),
      );
    }
    if (declared && !isDtoClass(declared)) this.compile(schema, owner, which);
    return schema;
  }

  /** `x-mcp-header` annotations a client would reject make the tool unusable: refuse them at boot. */
  private checkParamHeaders(schema: JsonSchema, owner: string, tool: string): void {
    try {
      mcpParamHeadersOf(schema);
    } catch (error) {
      if (error instanceof McpParamHeaderError)
        throw new McpConfigurationError(invalidMcpHeaderMessage(owner, tool, error.message));
      throw error;
    }
  }

  private compile(schema: JsonSchema, owner: string, which: 'input' | 'output') {
    try {
      return compileJsonSchema(schema);
    } catch (error) {
      throw new McpConfigurationError(invalidSchemaMessage(owner, which, (error as Error).message));
    }
  }
}

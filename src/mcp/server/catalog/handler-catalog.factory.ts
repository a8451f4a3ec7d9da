import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpPromptMetadata } from '../../interfaces/mcp-prompt-options.interface';
import type { McpResourceMetadata, McpResourceTemplateMetadata } from '../../interfaces/mcp-resource-options.interface';
import type { McpToolMetadata } from '../../interfaces/mcp-tool-options.interface';
import {
  invalidResourceUriMessage,
  invalidToolNameMessage,
  invalidUriTemplateMessage,
  promptArgumentsSchemaMessage,
  publicRestrictedMessage,
  templateVariablesSchemaMessage,
} from '../../mcp.messages';
import { TOOL_NAME_PATTERN } from '../../protocol/mcp-methods';
import { compilePromptArguments, type PromptArgumentsSpec } from '../features/prompt-arguments';
import type { RegisteredPrompt, RegisteredResource, RegisteredResourceTemplate } from '../features/registered-features';
import { UriTemplate } from '../features/uri-template';
import { checkedRateLimit } from '../config/mcp-rate-limit.options';
import { checkedPublic } from '../pipeline/public-handlers';
import { checkedInputBeforeTask, checkedTaskSupport } from '../tasks/task-support';
import type { RegisteredTool } from '../tools/registered-tool';
import type { CompiledValidator } from '../tools/json-schema-validator';
import {
  StandardJsonSchemaError,
  compileStandardValidator,
  isStandardSchema,
  standardJsonSchema,
} from '../tools/standard-schema';
import { compileInputValidator } from '../tools/tool-schema.factory';
import {
  checkParamHeaders,
  checkedToolRoles,
  checkedToolSchema,
  checkedToolScopes,
  compiledOutputValidator,
} from './tool-checks';

// Decorated handlers (the explorers) and runtime ones (`McpRegistry`) are validated and built
// here, so both paths apply the same checks and publish the same definitions. What differs stays
// with the caller: how the handler is invoked, and a decorated handler's Nest pipeline and completers.

/** A tool as built from its declaration: a `RegisteredTool` without its invoker and pipeline. */
export type BuiltTool = Omit<RegisteredTool, 'invoke' | 'pipeline'> & {
  scopes: readonly string[];
  roles: readonly string[];
  public: boolean;
};

/** A prompt as built from its declaration (without its getter, pipeline and completers), and the names its completers may be keyed by. */
export interface BuiltPrompt {
  /** The prompt without its getter, pipeline and completers, which the caller adds. */
  entry: Omit<RegisteredPrompt, 'get' | 'pipeline' | 'completers'>;
  /** The argument names, in order: a `complete` entry must be keyed by one of them. */
  argumentNames: readonly string[];
}

/** A resource as built from its declaration: a `RegisteredResource` without its reader and pipeline. */
export type BuiltResource = Omit<RegisteredResource, 'read' | 'pipeline'>;

/** A resource template as built from its declaration, without its reader, pipeline and completers. */
export type BuiltResourceTemplate = Omit<RegisteredResourceTemplate, 'read' | 'pipeline' | 'completers'>;

const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Keeps the fields that are set, under their published names. */
function published(fields: Record<string, unknown>): Readonly<Record<string, unknown>> {
  return Object.freeze(Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)));
}

/**
 * Checks a tool's declaration and builds its definition and validators: the name, the input
 * schema (a class-validator DTO, a JSON Schema or a Standard Schema, whose published schema is
 * its Standard JSON Schema conversion or the given `inputJsonSchema`) and its `x-mcp-header`
 * annotations, the output schema, task support, scopes, roles, `public` and `rateLimit`. Throws
 * `McpConfigurationError` naming `owner` (`namedBy` for a bad name, which `McpRegistry` reports
 * as its own).
 */
export function buildToolEntry(declaration: McpToolMetadata, owner: string, namedBy = owner): BuiltTool {
  const { name, title, description, annotations, icons, meta, task } = declaration;
  if (!TOOL_NAME_PATTERN.test(name)) throw new McpConfigurationError(invalidToolNameMessage(name, namedBy));
  const { input, output } = declaration;
  const inputSchema = checkedToolSchema(input, owner, 'input', declaration.inputJsonSchema);
  checkParamHeaders(inputSchema, owner, name);
  const outputSchema =
    output || declaration.outputJsonSchema !== undefined
      ? checkedToolSchema(output, owner, 'output', declaration.outputJsonSchema)
      : undefined;
  const taskSupport = task === undefined ? undefined : checkedTaskSupport(task, owner);
  const inputBeforeTask = checkedInputBeforeTask(declaration.inputBeforeTask, task, owner);
  const scopes = checkedToolScopes(declaration.scopes, owner);
  const roles = checkedToolRoles(declaration.roles, owner);
  const isPublic = checkedPublic('@McpTool', owner, declaration.public);
  const rateLimit = checkedRateLimit(declaration.rateLimit, `@McpTool on ${owner}`, true) ?? undefined;
  if (isPublic && (scopes.length || roles.length)) {
    throw new McpConfigurationError(
      publicRestrictedMessage('@McpTool', owner, name, scopes.length ? 'scopes' : 'roles'),
    );
  }
  return {
    name,
    owner,
    scopes,
    roles,
    public: isPublic,
    definition: published({
      name,
      title,
      description,
      inputSchema,
      outputSchema,
      annotations,
      icons,
      _meta: meta,
      execution: taskSupport ? { taskSupport } : undefined,
    }),
    taskSupport,
    inputBeforeTask,
    idempotent: annotations?.idempotentHint === true,
    rateLimit,
    validateInput: compileInputValidator(input),
    validateOutput: output && outputSchema ? compiledOutputValidator(output, outputSchema, owner) : undefined,
  };
}

/** The arguments of a prompt, a Standard Schema's refusal (no JSON Schema, not an object) named after `owner`. */
function checkedPromptArguments(declared: McpPromptMetadata['arguments'], owner: string): PromptArgumentsSpec {
  try {
    return compilePromptArguments(declared);
  } catch (error) {
    if (error instanceof StandardJsonSchemaError)
      throw new McpConfigurationError(promptArgumentsSchemaMessage(owner, error.message));
    throw error;
  }
}

/** Checks a prompt's arguments (a list, a DTO or a Standard Schema) and builds its definition and argument validator. */
export function buildPromptEntry(
  declaration: Omit<McpPromptMetadata, 'complete' | 'public'>,
  owner: string,
): BuiltPrompt {
  const spec = checkedPromptArguments(declaration.arguments, owner);
  const { name, title, description, icons, meta } = declaration;
  const definition = published({
    name,
    title,
    description,
    arguments: spec.arguments.length ? spec.arguments : undefined,
    icons,
    _meta: meta,
  });
  return {
    entry: { name, owner, definition, validateArguments: spec.validate },
    argumentNames: spec.arguments.map((argument) => argument.name),
  };
}

/** Checks that a resource's URI is absolute and builds its definition. */
export function buildResourceEntry(declaration: Omit<McpResourceMetadata, 'public'>, owner: string): BuiltResource {
  const { uri, name, title, description, mimeType, annotations, size, icons, meta } = declaration;
  if (!ABSOLUTE_URI.test(uri)) throw new McpConfigurationError(invalidResourceUriMessage(owner, uri));
  return {
    uri,
    owner,
    mimeType,
    definition: published({ uri, name, title, description, mimeType, annotations, size, icons, _meta: meta }),
  };
}

/** Parses a resource template (RFC 6570 level 1) and builds its definition. */
export function buildTemplateEntry(
  declaration: Omit<McpResourceTemplateMetadata, 'complete' | 'public'>,
  owner: string,
): BuiltResourceTemplate {
  const { uriTemplate, name, title, description, mimeType, annotations, icons, meta } = declaration;
  let template: UriTemplate;
  try {
    template = new UriTemplate(uriTemplate);
  } catch (error) {
    throw new McpConfigurationError(invalidUriTemplateMessage(owner, uriTemplate, (error as Error).message));
  }
  return {
    template,
    owner,
    mimeType,
    ...(declaration.variables === undefined
      ? {}
      : { validateVariables: templateVariablesValidator(declaration.variables, template, owner) }),
    definition: published({ uriTemplate, name, title, description, mimeType, annotations, icons, _meta: meta }),
  };
}

/**
 * The validator of a template's `variables` schema: a Standard Schema whose JSON Schema, when the
 * library offers one, names only variables of the template (a property the URI never fills would
 * make every read fail).
 */
function templateVariablesValidator(schema: unknown, template: UriTemplate, owner: string): CompiledValidator {
  if (!isStandardSchema(schema))
    throw new McpConfigurationError(templateVariablesSchemaMessage(owner, 'it is not a Standard Schema'));
  let properties: Record<string, unknown> | undefined;
  try {
    properties = standardJsonSchema(schema, 'input').properties as Record<string, unknown> | undefined;
  } catch {
    // Without a JSON Schema there is nothing to compare; the schema still validates.
  }
  const unknown = Object.keys(properties ?? {}).filter((name) => !template.variables.includes(name));
  if (unknown.length)
    throw new McpConfigurationError(
      templateVariablesSchemaMessage(
        owner,
        `it names ${unknown.map((name) => `"${name}"`).join(', ')}, which ${template.template} does not have`,
      ),
    );
  return compileStandardValidator(schema);
}

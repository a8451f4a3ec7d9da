import type { McpCompletionContext } from '../../interfaces/mcp-completion.interface';
import type { McpResourceRequest } from '../../interfaces/mcp-resource-options.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { CatalogEntry } from '../pipeline/handler-catalog';
import type { CompiledValidator } from '../tools/json-schema-validator';
import type { UriTemplate } from './uri-template';

/** Calls a discovered provider method (resolving a request-scoped instance first when needed). */
export type MethodInvoker = (argument: unknown, context: McpToolContext) => Promise<unknown>;

/** A completer resolved at boot (a function, or a method of the declaring provider). */
export type ResolvedCompleter = (value: string, context: McpCompletionContext) => Promise<unknown>;

/** Completers resolved at boot, keyed by argument or template variable name. */
export type ResolvedCompleters = ReadonlyMap<string, ResolvedCompleter>;

/** A resource at a fixed URI, ready to serve. */
export interface RegisteredResource extends CatalogEntry {
  /** The URI clients read. */
  uri: string;
  /** MIME type given to contents returned without one. */
  mimeType?: string;
  /** Reads the resource. */
  read(request: McpResourceRequest, context: McpToolContext): Promise<unknown>;
}

/** A resource template, ready to match URIs and serve them. */
export interface RegisteredResourceTemplate extends CatalogEntry {
  /** The parsed template. */
  template: UriTemplate;
  /** MIME type given to contents returned without one. */
  mimeType?: string;
  /** Completers of the template's variables. */
  completers: ResolvedCompleters;
  /** Checks and parses the variables of a URI (the template's `variables` schema), when it has one. */
  validateVariables?: CompiledValidator;
  /** Reads one resource of the family. */
  read(request: McpResourceRequest, context: McpToolContext): Promise<unknown>;
}

/** A prompt, ready to serve. */
export interface RegisteredPrompt extends CatalogEntry {
  /** The prompt name. */
  name: string;
  /** Checks the arguments of `prompts/get` (required ones present, all strings, DTO rules). */
  validateArguments: CompiledValidator;
  /** Completers of the arguments. */
  completers: ResolvedCompleters;
  /** Builds the prompt. */
  get(args: unknown, context: McpToolContext): Promise<unknown>;
}

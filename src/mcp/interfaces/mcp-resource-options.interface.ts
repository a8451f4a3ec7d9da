import type { McpCompleters } from './mcp-completion.interface';
import type { McpIcon } from './mcp-tool-options.interface';
import type { McpStandardSchema } from './standard-schema.interface';

/** Hints about a resource, as the MCP specification defines them. */
export interface McpResourceAnnotations {
  /** Who the resource is meant for. */
  audience?: ('user' | 'assistant')[];
  /** Importance from 0 (least) to 1 (most). */
  priority?: number;
  /** ISO 8601 time of the last modification. */
  lastModified?: string;
}

/** Fields shared by `@McpResource` and `@McpResourceTemplate`. */
export interface McpResourceCommonOptions {
  /**
   * Programmatic name.
   * @default the method name
   */
  name?: string;
  /** Human-readable title shown by clients. */
  title?: string;
  /** What the resource holds; models read this. */
  description?: string;
  /** MIME type of the contents; also used for contents the handler returns without one. */
  mimeType?: string;
  /** Audience, priority and modification hints. */
  annotations?: McpResourceAnnotations;
  /** Icons a client may show. */
  icons?: McpIcon[];
  /** Extra `_meta` published with the definition. */
  meta?: Record<string, unknown>;
  /**
   * Also for callers without a token: on a mount with `anonymous: true`, the anonymous principal
   * finds this resource (or template) in the lists and may read, complete and subscribe to it.
   * Authenticated callers see it either way. Without it, the anonymous principal is answered as
   * for a resource that does not exist.
   * @default false
   */
  public?: boolean;
}

/** Options of `@McpResource`: one resource at a fixed URI. */
export interface McpResourceOptions extends McpResourceCommonOptions {
  /** The URI clients read (`file:///readme.md`, `config://app`). */
  uri: string;
  /** Size in bytes, when known in advance. */
  size?: number;
}

/** Options of `@McpResourceTemplate`: a family of resources whose URIs match a template. */
export interface McpResourceTemplateOptions extends McpResourceCommonOptions {
  /** An RFC 6570 level-1 URI template, e.g. `repo://{owner}/{name}/readme`. */
  uriTemplate: string;
  /** Completers for the template's variables (`completion/complete` with `ref/resource`). */
  complete?: McpCompleters;
  /**
   * A Standard Schema (Zod, Valibot, ArkType) of an object keyed by the template's variables: it
   * validates the variables of each URI read before the handler runs, and the handler's
   * `request.params` is its parsed value (`z.coerce.number()` gives a number). A URI whose
   * variables it rejects answers -32602 `Invalid params` with each issue as `path: message`.
   * @default none: the variables reach the handler as the strings of the URI
   */
  variables?: McpStandardSchema;
}

/** What `@McpResource` stores on a method. */
export interface McpResourceMetadata extends McpResourceOptions {
  /** The resolved name. */
  name: string;
}

/** What `@McpResourceTemplate` stores on a method. */
export interface McpResourceTemplateMetadata extends McpResourceTemplateOptions {
  /** The resolved name. */
  name: string;
}

/**
 * The first argument of a resource handler: the URI being read and, for templates, its variables.
 * With a template's `variables` schema, type them as its parsed value:
 * `McpResourceRequest<McpToolArgs<typeof Variables>>`.
 */
export interface McpResourceRequest<Params = Record<string, string>> {
  /** The requested URI, as the client sent it. */
  uri: string;
  /**
   * The decoded template variables (empty for a fixed resource); with the template's `variables`
   * schema, its parsed value.
   */
  params: Params;
}

/** Text contents of a resource. */
export interface McpTextResourceContents {
  /** The URI of the resource these contents are of. */
  uri: string;
  /** The contents' MIME type, when known. */
  mimeType?: string;
  /** The text. */
  text: string;
  /** Metadata the protocol reserves for extensions (`_meta`). */
  _meta?: Record<string, unknown>;
}

/** Binary contents of a resource, base64-encoded. */
export interface McpBlobResourceContents {
  /** The URI of the resource these contents are of. */
  uri: string;
  /** The contents' MIME type, when known. */
  mimeType?: string;
  /** The bytes, base64-encoded. */
  blob: string;
  /** Metadata the protocol reserves for extensions (`_meta`). */
  _meta?: Record<string, unknown>;
}

/** One entry of a `resources/read` result. */
export type McpResourceContents = McpTextResourceContents | McpBlobResourceContents;

/** A complete `resources/read` result. */
export interface McpReadResourceResult {
  /** The resource's contents: one entry, or several (e.g. the files of a directory). */
  contents: McpResourceContents[];
  /** Metadata the protocol reserves for extensions (`_meta`). */
  _meta?: Record<string, unknown>;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/**
 * What a resource handler may return: a string (text), a Buffer or Uint8Array (a base64 blob),
 * one contents object, an array of them, or a full result. `null` or `undefined` means the
 * resource does not exist (answered with the revision's not-found error).
 */
export type McpResourceReturn =
  string | Uint8Array | McpResourceContents | McpResourceContents[] | McpReadResourceResult | null | undefined;

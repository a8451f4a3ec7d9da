import type { Type } from '@nestjs/common';
import type { McpCompleters } from './mcp-completion.interface';
import type { McpContent } from './mcp-tool-context.interface';
import type { McpIcon } from './mcp-tool-options.interface';
import type { McpStandardSchema } from './standard-schema.interface';

/** One argument a prompt accepts. */
export interface McpPromptArgument {
  /** Argument name. */
  name: string;
  /** Human-readable title. */
  title?: string;
  /** What the argument is for. */
  description?: string;
  /**
   * Whether `prompts/get` must carry it (a missing one is answered with -32602).
   * @default false
   */
  required?: boolean;
}

/** Options of `@McpPrompt`. */
export interface McpPromptOptions {
  /**
   * Prompt name.
   * @default the method name
   */
  name?: string;
  /** Human-readable title shown by clients. */
  title?: string;
  /** What the prompt does. */
  description?: string;
  /**
   * The arguments: a list, a class-validator DTO class whose string properties become the
   * arguments (required unless `@IsOptional()`; the handler then receives a validated instance),
   * or a Standard Schema of an object of strings such as `z.object({ code: z.string() })` (its
   * properties become the arguments, required as its JSON Schema says; the handler then receives
   * its parsed value). A Standard Schema needs Standard JSON Schema (`~standard.jsonSchema`).
   */
  arguments?: McpPromptArgument[] | Type<unknown> | McpStandardSchema;
  /** Completers for the arguments (`completion/complete` with `ref/prompt`). */
  complete?: McpCompleters;
  /** Icons a client may show. */
  icons?: McpIcon[];
  /** Extra `_meta` published with the definition. */
  meta?: Record<string, unknown>;
  /**
   * Also for callers without a token: on a mount with `anonymous: true`, the anonymous principal
   * finds this prompt in `prompts/list` and may get and complete it. Authenticated callers see it
   * either way. Without it, the anonymous principal is answered as for an unknown prompt.
   * @default false
   */
  public?: boolean;
}

/** What `@McpPrompt` stores on a method. */
export interface McpPromptMetadata extends McpPromptOptions {
  /** The resolved name. */
  name: string;
}

/** One message of a prompt: text, image, audio, a resource link or an embedded resource. */
export interface McpPromptMessage {
  /** Who says it in the conversation the prompt starts. */
  role: 'user' | 'assistant';
  /** What is said: one content block. */
  content: McpContent;
}

/** A complete `prompts/get` result. */
export interface McpGetPromptResult {
  /** A description of the prompt, when it has one. */
  description?: string;
  /** The messages of the prompt, in order. */
  messages: McpPromptMessage[];
  /** Metadata the protocol reserves for extensions (`_meta`). */
  _meta?: Record<string, unknown>;
  /** Any other field, passed through as sent. */
  [key: string]: unknown;
}

/**
 * What a prompt handler may return: a string (one user text message), an array of messages, or
 * a full `GetPromptResult`.
 */
export type McpPromptReturn = string | McpPromptMessage[] | McpGetPromptResult;

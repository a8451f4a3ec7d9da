import type { Type } from '@nestjs/common';
import type { McpTaskSupport } from '../protocol/tasks';
import type { McpStandardSchema } from './standard-schema.interface';

/** A JSON Schema object (2020-12 unless it names another draft in `$schema`). */
export type JsonSchema = Record<string, unknown>;

/**
 * What a tool's `input` or `output` may be: a class-validator DTO class, a JSON Schema object, or
 * a Standard Schema (Zod 4, Valibot, ArkType...), each describing an object.
 */
export type McpToolSchema = Type<unknown> | JsonSchema | McpStandardSchema;

/** Hints about a tool's behaviour, as the MCP specification defines them. */
export interface McpToolAnnotations {
  /** Human-readable title. */
  title?: string;
  /** The tool does not modify its environment. */
  readOnlyHint?: boolean;
  /** The tool may perform destructive updates. */
  destructiveHint?: boolean;
  /** Calling the tool repeatedly with the same arguments has no additional effect. */
  idempotentHint?: boolean;
  /** The tool may interact with an open world of external entities. */
  openWorldHint?: boolean;
}

/** An icon a client may show for a tool. */
export interface McpIcon {
  /** URL or data URI of the image. */
  src: string;
  /** MIME type, e.g. `image/png`. */
  mimeType?: string;
  /** Sizes such as `48x48`, or `any`. */
  sizes?: string[];
  /** Theme the icon is meant for. */
  theme?: 'light' | 'dark';
}

/**
 * A budget of `tools/call`s: at most `limit` calls in a window of `windowMs`. The window opens
 * with the first counted call and closes `windowMs` later (a fixed window); a call over the
 * budget answers HTTP 429 with JSON-RPC `-32000` and the time until the window closes
 * (`Retry-After`, `data.retryAfterMs`), and does not run the tool. With the mount's `redis` every
 * replica counts in Redis, so the budget holds for all of them together.
 */
export interface McpRateLimit {
  /** Calls allowed in one window: a positive integer. */
  limit: number;
  /** Length of the window, in milliseconds: a positive integer. */
  windowMs: number;
  /**
   * Whose budget it is: `'principal'` gives every caller (`McpPrincipal.key`) a budget of its
   * own; `'mount'` gives the tool one budget that all callers of the mount share.
   * @default 'principal'
   */
  per?: 'principal' | 'mount';
}

/** Options of `@McpTool`. */
export interface McpToolOptions {
  /**
   * Tool name: 1 to 128 characters of `A-Z a-z 0-9 _ . -`.
   * @default the method name
   */
  name?: string;
  /** Human-readable title shown by clients. */
  title?: string;
  /** What the tool does; models read this to decide when to call it. */
  description: string;
  /**
   * Input: a class-validator DTO class (its JSON Schema is derived from the decorators, and
   * arguments are validated and transformed into an instance), a plain JSON Schema object
   * with `type: 'object'` (validated with Ajv), or a Standard Schema of an object such as
   * `z.object({...})` (validated by its library, the handler receives its parsed value; the
   * published `inputSchema` is its Standard JSON Schema input conversion, or `inputJsonSchema`).
   * Omit for a tool without arguments. `McpToolArgs<typeof input>` types the handler's arguments.
   */
  input?: McpToolSchema;
  /**
   * Structured output: a DTO class, a JSON Schema object with `type: 'object'` or a Standard
   * Schema of an object. The handler then returns an object that is validated against it, sent as
   * `structuredContent` (for a Standard Schema, its parsed value) and mirrored as JSON text.
   */
  output?: McpToolSchema;
  /**
   * The `inputSchema` to publish for a Standard Schema `input`, in place of the library's own
   * conversion: for a library without Standard JSON Schema (`~standard.jsonSchema`), or to publish
   * a schema of your own. Arguments are still validated by the Standard Schema. Only with a
   * Standard Schema `input`.
   */
  inputJsonSchema?: JsonSchema;
  /** The `outputSchema` to publish for a Standard Schema `output`, as `inputJsonSchema` is for the input. */
  outputJsonSchema?: JsonSchema;
  /** Behaviour hints. */
  annotations?: McpToolAnnotations;
  /** Icons a client may show. */
  icons?: McpIcon[];
  /** Extra `_meta` published with the tool definition. */
  meta?: Record<string, unknown>;
  /**
   * OAuth scopes a caller's token must carry to see and call this tool. A principal without
   * them does not find the tool in `tools/list`, and calling it over HTTP answers 403 with
   * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` so the client can ask for
   * a token with more scopes (step-up). In process (the toolset transport), a principal without
   * `scopes` holds none.
   * @default none: every authenticated caller
   */
  scopes?: string[];
  /**
   * Roles that may see and call this tool: the caller's principal needs at least one of them
   * (`McpPrincipal.roles`). Anyone else does not find the tool in `tools/list`, and a call answers
   * as for an unknown tool (-32602). For richer rules, put a guard on the method (`@UseGuards`).
   * @default none: every authenticated caller
   */
  roles?: string[];
  /**
   * Also for callers without a token: on a mount with `anonymous: true`, the anonymous principal
   * finds this tool in `tools/list` and may call it. Authenticated callers see it either way.
   * The anonymous principal does not see the other tools, and its `tools/call` of one of them
   * (or of a tool that does not exist) answers HTTP 401 with the mount's challenge. A public tool
   * cannot also ask for `scopes` or `roles`, which the anonymous principal never holds: the app
   * then fails at boot, naming the tool. Guards of its own (`@UseGuards`) still run.
   * @default false
   */
  public?: boolean;
  /**
   * Whether a client may call the tool as a task (experimental tasks of 2025-11-25), published as
   * `execution.taskSupport`: `'optional'` (either way), `'required'` (only as a task; a plain call
   * answers -32601) or `'forbidden'` (a task-augmented call answers -32601). A task runs at most
   * once; one interrupted by a dead worker is run again only when `annotations.idempotentHint`
   * is true. The mount declares the `tasks` capability when some tool allows tasks.
   * @default 'forbidden'
   */
  task?: McpTaskSupport;
  /**
   * For a tool that allows tasks: on 2026-07-28 the handler starts with the `tools/call` itself
   * (its input requests are `input_required` rounds of the call) and the task is created only
   * when it calls `ctx.startTask()`, as the tasks extension advises for a tool that needs input
   * before it can run on its own. Without it the task is created before the handler starts.
   * Needs `task: 'optional' | 'required'`.
   * @default false
   */
  inputBeforeTask?: boolean;
  /**
   * A budget of calls of this tool (`{ limit, windowMs, per }`), per principal unless `per` is
   * `'mount'`, on top of the mount's `rateLimit`. Only `tools/call` counts (`tools/list` never
   * does); a call refused before it reaches the tool (unknown, missing scopes or roles, switched
   * off) does not count, and a task counts once, when it is created.
   * @default (none: no budget of its own)
   */
  rateLimit?: McpRateLimit;
}

/** What `@McpTool` stores on a method. */
export interface McpToolMetadata extends McpToolOptions {
  /** The resolved tool name. */
  name: string;
}

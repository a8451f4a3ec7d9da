import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { HandlerPipeline } from '../pipeline/handler-pipeline';
import type { CompiledValidator } from './json-schema-validator';
import type { McpTaskSupport } from '../../protocol/tasks';

/** A tool ready to serve: its published definition, compiled validators and how to invoke it. */
export interface RegisteredTool {
  /** The tool name. */
  name: string;
  /** `Class#method`, for messages. */
  owner: string;
  /** The definition published by `tools/list`, computed once. */
  definition: Readonly<Record<string, unknown>>;
  /** Validates (and for DTOs, transforms) the arguments. */
  validateInput: CompiledValidator;
  /** Validates structured output, when the tool declares `output`. */
  validateOutput?: CompiledValidator;
  /** Scopes a principal needs to see and call the tool (none when absent or empty). */
  scopes?: readonly string[];
  /** Roles of which a principal needs one to see and call the tool (anyone when absent or empty). */
  roles?: readonly string[];
  /** True when the anonymous principal may see and call the tool (`public: true`). */
  public?: boolean;
  /** Nest's guards, interceptors, pipes and filters of the handler; absent when it has none (the direct call). */
  pipeline?: HandlerPipeline;
  /** Whether the tool may run as a task (absent: `forbidden`). */
  taskSupport?: McpTaskSupport;
  /** True when the handler gathers input before its task exists (`inputBeforeTask`, `ctx.startTask()`). */
  inputBeforeTask?: boolean;
  /** True when the tool declared `idempotentHint: true`: an interrupted task of it is run again. */
  idempotent?: boolean;
  /** Calls the handler (resolving a request-scoped instance first when needed). */
  invoke(args: unknown, context: McpToolContext): Promise<unknown>;
}

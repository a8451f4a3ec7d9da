import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { CatalogEntry } from '../pipeline/handler-catalog';
import type { CompiledValidator } from './json-schema-validator';
import type { McpTaskSupport } from '../../protocol/tasks';
import type { McpResolvedRateLimit } from '../config/mcp-rate-limit.options';

/** A tool ready to serve: its published definition, compiled validators and how to invoke it. */
export interface RegisteredTool extends CatalogEntry {
  /** The tool name. */
  name: string;
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
  /** Whether the tool may run as a task (absent: `forbidden`). */
  taskSupport?: McpTaskSupport;
  /** True when the handler gathers input before its task exists (`inputBeforeTask`, `ctx.startTask()`). */
  inputBeforeTask?: boolean;
  /** True when the tool declared `idempotentHint: true`: an interrupted task of it is run again. */
  idempotent?: boolean;
  /** The tool's own budget of calls (`rateLimit`), when it declares one. */
  rateLimit?: McpResolvedRateLimit;
  /** Calls the handler (resolving a request-scoped instance first when needed). */
  invoke(args: unknown, context: McpToolContext): Promise<unknown>;
}

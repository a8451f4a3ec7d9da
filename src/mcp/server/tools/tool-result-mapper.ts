import type { McpCallToolResult, McpContent } from '../../interfaces/mcp-tool-context.interface';
import type { RegisteredTool } from './registered-tool';

function isCallToolResult(value: unknown): value is McpCallToolResult {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as McpCallToolResult).content)
  );
}

/** An `isError` result carrying one text block. */
export function errorResult(text: string): McpCallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Reads a thrown value's message without trusting its shape. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'The tool failed';
}

/**
 * Turns whatever a handler returned into a `CallToolResult`: strings become one text block,
 * arrays are content blocks, results pass through, and for tools with `output` the object is
 * validated, sent as `structuredContent` (as the validator gives it back) and mirrored as JSON text.
 */
export async function toCallToolResult(tool: RegisteredTool, returned: unknown): Promise<McpCallToolResult> {
  if (tool.validateOutput) {
    const structured = isCallToolResult(returned) ? returned.structuredContent : returned;
    if (isCallToolResult(returned) && returned.isError) return returned;
    const outcome = await tool.validateOutput(structured);
    if (!outcome.ok) {
      return errorResult(
        `Tool "${tool.name}" returned output that does not match its output schema: ${outcome.message}`,
      );
    }
    // The validated value: a Standard Schema's parsed form (unknown keys stripped, defaults set),
    // the returned object itself for a JSON Schema.
    const value = outcome.value as Record<string, unknown>;
    if (isCallToolResult(returned)) return value === structured ? returned : { ...returned, structuredContent: value };
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
  }
  if (returned === undefined || returned === null) return { content: [] };
  if (typeof returned === 'string') return { content: [{ type: 'text', text: returned }] };
  if (Array.isArray(returned)) return { content: returned as McpContent[] };
  if (isCallToolResult(returned)) return returned;
  return { content: [{ type: 'text', text: JSON.stringify(returned) }] };
}

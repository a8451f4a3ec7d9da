/**
 * Tool use in sampling (2025-11-25 and later). Pure TypeScript: the server reads it to decide
 * whether it may send `tools`, the client to declare and to refuse what it cannot answer.
 */

/** The `sampling/createMessage` params that need the client's `sampling.tools` capability. */
export const SAMPLING_TOOL_PARAMS = ['tools', 'toolChoice'] as const;

/** The tool use params a `sampling/createMessage` request carries (empty when it carries none). */
export function samplingToolParams(params: Record<string, unknown> | null | undefined): string[] {
  return SAMPLING_TOOL_PARAMS.filter((name) => params?.[name] !== undefined);
}

/** Whether a client declared tool use in sampling (`capabilities.sampling.tools`). */
export function declaresSamplingTools(capabilities: Record<string, unknown> | null | undefined): boolean {
  const sampling = capabilities?.sampling;
  if (!sampling || typeof sampling !== 'object' || Array.isArray(sampling)) return false;
  const tools = (sampling as Record<string, unknown>).tools;
  return tools !== undefined && tools !== null && tools !== false;
}

/** The `sampling` capability a client declares: with `tools` when its handler accepts tool use. */
export function samplingCapabilityFor(tools: boolean): Record<string, unknown> {
  return tools ? { tools: {} } : {};
}

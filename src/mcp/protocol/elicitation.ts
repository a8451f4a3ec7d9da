/**
 * Elicitation modes (form and URL) and the URL elicitation required error. Pure TypeScript:
 * the server reads it to decide what it may ask, the client to declare what it can answer.
 */

/** How an elicitation reaches the user: a form the client renders, or a URL the user opens. */
export type McpElicitationMode = 'form' | 'url';

/**
 * JSON-RPC error code of the URL elicitation required error (2025-11-25 only: the stateless
 * revision reserves the code and asks for URL elicitations with `input_required` instead).
 */
export const URL_ELICITATION_REQUIRED = -32042;

/**
 * The elicitation modes a client declared in its `elicitation` capability. An empty object
 * (as every client wrote it before URL mode existed) means form mode only; no capability, none.
 */
export function declaredElicitationModes(
  capabilities: Record<string, unknown> | null | undefined,
): McpElicitationMode[] {
  const declared = capabilities?.elicitation;
  if (!declared || typeof declared !== 'object' || Array.isArray(declared)) return [];
  const modes = (['form', 'url'] as const).filter((mode) => (declared as Record<string, unknown>)[mode] !== undefined);
  return modes.length ? modes : ['form'];
}

/** The `elicitation` capability a client declares for the modes it can answer (none: undefined). */
export function elicitationCapabilityFor(modes: readonly McpElicitationMode[]): Record<string, unknown> | undefined {
  if (!modes.length) return undefined;
  // Form alone keeps the empty object every revision reads as form mode.
  if (modes.length === 1 && modes[0] === 'form') return {};
  return Object.fromEntries(modes.map((mode) => [mode, {}]));
}

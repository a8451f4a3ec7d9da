import type { McpPrincipal } from '../../interfaces/principal.interface';

/**
 * The scopes of `required` the principal does not hold (empty when it may proceed). A principal
 * without `scopes` (one built in process) holds none.
 */
export function missingScopes(required: readonly string[], principal: McpPrincipal): string[] {
  if (required.length === 0) return [];
  const granted = principal.scopes ?? [];
  return required.filter((scope) => !granted.includes(scope));
}

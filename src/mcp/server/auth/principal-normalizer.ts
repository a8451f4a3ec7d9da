import type { McpAuthResult, McpPrincipal } from '../../interfaces/principal.interface';

/**
 * Turns what an authorizer returned into a principal, or null when the token was rejected
 * (any falsy value, or an object without a usable key).
 */
export function normalizePrincipal(result: McpAuthResult): McpPrincipal | null {
  if (!result) return null;
  if (typeof result === 'string' || typeof result === 'number') {
    const key = String(result);
    return { key, label: key, raw: result };
  }
  if (typeof result === 'object' && (typeof result.key === 'string' || typeof result.key === 'number') && String(result.key) !== '') {
    const key = String(result.key);
    return { key, label: typeof result.label === 'string' && result.label ? result.label : key, raw: result };
  }
  return null;
}

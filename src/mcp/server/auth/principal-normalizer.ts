import type { McpAuthResult, McpPrincipal } from '../../interfaces/principal.interface';

/** A list of names from an array of strings or one space-separated string; anything else is none. */
function names(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((name) => name !== '');
  if (Array.isArray(value)) return value.filter((name): name is string => typeof name === 'string' && name !== '');
  return [];
}

/**
 * Turns what an authorizer returned into a principal, or null when the token was rejected
 * (any falsy value, or an object without a usable key).
 */
export function normalizePrincipal(result: McpAuthResult): McpPrincipal | null {
  if (!result) return null;
  if (typeof result === 'string' || typeof result === 'number') {
    const key = String(result);
    return { key, label: key, raw: result, scopes: [], roles: [] };
  }
  if (
    typeof result === 'object' &&
    (typeof result.key === 'string' || typeof result.key === 'number') &&
    String(result.key) !== ''
  ) {
    const key = String(result.key);
    const label = typeof result.label === 'string' && result.label ? result.label : key;
    return { key, label, raw: result, scopes: names(result.scopes), roles: names(result.roles) };
  }
  return null;
}

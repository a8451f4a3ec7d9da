import type { McpAuthResult } from '../../interfaces/principal.interface';

/** How token claims become a principal. */
export interface McpClaimMapping {
  /**
   * The claim used as the principal's label (for the audit trail).
   * @default the first string among `name`, `preferred_username`, `email`, `client_id`, then `sub`
   */
  labelClaim?: string;
  /**
   * Dotted path of the claim that holds the caller's roles (an array of strings or a
   * space-separated string), e.g. `realm_access.roles`.
   * @default 'roles'
   */
  rolesClaim?: string;
}

const LABEL_CLAIMS = ['name', 'preferred_username', 'email', 'client_id'];

function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function list(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item !== '') : [];
}

/**
 * Maps verified claims (of a JWT or an introspection answer) to an authorizer result: `sub` (or
 * `client_id` for a token without a subject) is the key; `scope` (RFC 9068, space-separated) or
 * `scp` (an array, as some servers send) the scopes; the roles come from `rolesClaim`. The claims
 * are kept on the result, so tools read them as `ctx.principal.raw.claims`. No key, no principal.
 */
export function principalFromClaims(claims: Record<string, unknown>, mapping: McpClaimMapping): McpAuthResult {
  const subject =
    typeof claims.sub === 'string' && claims.sub
      ? claims.sub
      : typeof claims.client_id === 'string'
        ? claims.client_id
        : undefined;
  if (!subject) return null;
  const labelCandidates = mapping.labelClaim ? [mapping.labelClaim] : LABEL_CLAIMS;
  const label =
    labelCandidates
      .map((claim) => claimAt(claims, claim))
      .find((value): value is string => typeof value === 'string' && value !== '') ?? subject;
  const scopes = list(claims.scope).length > 0 ? list(claims.scope) : list(claims.scp);
  return { key: subject, label, scopes, roles: list(claimAt(claims, mapping.rolesClaim ?? 'roles')), claims };
}

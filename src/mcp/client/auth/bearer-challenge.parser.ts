import type { McpAuthChallenge } from './mcp-client-auth.interface';

/**
 * Reads a `WWW-Authenticate` header (RFC 6750 section 3): the parameters of its `Bearer`
 * challenge. A header with no Bearer challenge gives all-null parameters.
 */
export function parseBearerChallenge(status: 401 | 403, header: string | null): McpAuthChallenge {
  const challenge: McpAuthChallenge = { status, error: null, scope: null, resourceMetadata: null };
  const bearer = header ? /(?:^|,)\s*Bearer\b(.*)$/i.exec(header) : null;
  if (!bearer) return challenge;
  const params = new Map<string, string>();
  for (const match of bearer[1].matchAll(/([A-Za-z_][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    params.set(match[1].toLowerCase(), match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]);
  }
  challenge.error = params.get('error') ?? null;
  challenge.scope = params.get('scope') ?? null;
  challenge.resourceMetadata = params.get('resource_metadata') ?? null;
  return challenge;
}

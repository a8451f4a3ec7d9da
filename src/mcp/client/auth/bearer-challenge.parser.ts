import type { McpAuthChallenge } from './mcp-client-auth.interface';

/**
 * Longest `WWW-Authenticate` value read, in characters: a longer one is taken as carrying no
 * Bearer parameters (the refusal is still a 401 or 403), so a hostile server's header costs
 * nothing to look at.
 */
export const MAX_CHALLENGE_CHARS = 8192;

/** RFC 9110 `tchar`, the characters of a scheme or parameter name. */
function isTokenChar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code > 0x20 && code < 0x7f && "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code)))
  );
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * Reads a `WWW-Authenticate` header (RFC 6750 section 3, RFC 9110 section 11.6.1): the
 * parameters of its first `Bearer` challenge. A header with no Bearer challenge, or longer than
 * `MAX_CHALLENGE_CHARS`, gives all-null parameters. One pass over the header: every step
 * consumes at least one character, so the time is linear in its length.
 */
export function parseBearerChallenge(status: 401 | 403, header: string | null): McpAuthChallenge {
  const challenge: McpAuthChallenge = { status, error: null, scope: null, resourceMetadata: null };
  if (!header || header.length > MAX_CHALLENGE_CHARS) return challenge;
  const params = new Map<string, string>();
  /** 'before' no Bearer challenge seen yet, 'in' reading its parameters, 'after' it ended. */
  let bearer: 'before' | 'in' | 'after' = 'before';
  let i = 0;
  const n = header.length;
  while (i < n && bearer !== 'after') {
    const code = header.charCodeAt(i);
    if (!isTokenChar(code)) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isTokenChar(header.charCodeAt(i)) && header[i] !== '=') i++;
    const name = header.slice(start, i);
    let j = i;
    while (j < n && isSpace(header.charCodeAt(j))) j++;
    if (j >= n || header[j] !== '=') {
      // A token not followed by "=" starts a challenge (or is a token68, which is skipped).
      if (bearer === 'in') bearer = 'after';
      else if (name.toLowerCase() === 'bearer') bearer = 'in';
      continue;
    }
    i = j + 1;
    while (i < n && isSpace(header.charCodeAt(i))) i++;
    let value: string;
    if (header[i] === '"') {
      const parts: string[] = [];
      i++;
      let from = i;
      while (i < n && header[i] !== '"') {
        if (header[i] === '\\' && i + 1 < n) {
          parts.push(header.slice(from, i));
          from = i + 1;
          i += 2;
        } else {
          i++;
        }
      }
      parts.push(header.slice(from, i));
      value = parts.join('');
      i++;
    } else {
      const from = i;
      while (i < n && header[i] !== ',' && !isSpace(header.charCodeAt(i))) i++;
      value = header.slice(from, i);
    }
    if (bearer === 'in') params.set(name.toLowerCase(), value);
  }
  challenge.error = params.get('error') ?? null;
  challenge.scope = params.get('scope') ?? null;
  challenge.resourceMetadata = params.get('resource_metadata') ?? null;
  return challenge;
}

import { McpOAuthClientError } from './oauth-client.errors';

/** What one request to a discovery or token endpoint gave. */
export interface OAuthReply {
  status: number;
  /** The body as text: at most the byte bound it was read with. */
  text: string;
}

/** The bounds of one request: its whole deadline (body included), and the largest body read. */
export interface OAuthFetchBounds {
  timeoutMs: number;
  maxBytes: number;
}

/**
 * One request to a metadata or token endpoint: no redirect followed, the deadline spans the
 * body, and the body is read chunk by chunk up to `maxBytes` (a larger one fails and the rest
 * is never downloaded), so a hostile peer costs at most the bound.
 * @param label how messages name the URL, e.g. `The token endpoint https://...`
 * @throws McpOAuthClientError naming the URL when it cannot be reached, is too slow or answers too much
 */
export async function oauthFetch(url: string, init: RequestInit, bounds: OAuthFetchBounds, label: string = url): Promise<OAuthReply> {
  const signal = AbortSignal.timeout(bounds.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal, redirect: 'error' });
  } catch (error) {
    throw new McpOAuthClientError(`${label} could not be reached: ${(error as Error).message}`, { cause: error });
  }
  const tooLarge = () => new McpOAuthClientError(`${label} answered a body larger than maxResponseBytes (${bounds.maxBytes} bytes)`);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (!response.body) return { status: response.status, text: '' };
  if (Number.isFinite(declared) && declared > bounds.maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch (error) {
        throw new McpOAuthClientError(`${label} could not be read: ${(error as Error).message}`, { cause: error });
      }
      if (chunk.done || !chunk.value) break;
      size += chunk.value.byteLength;
      if (size > bounds.maxBytes) throw tooLarge();
      chunks.push(chunk.value);
    }
  } finally {
    // Stops the download of what was not read; a no-op once the body was read to its end.
    reader.cancel().catch(() => undefined);
  }
  return { status: response.status, text: Buffer.concat(chunks).toString('utf8') };
}

/** The body as a JSON object, or null when it is not one. */
export function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

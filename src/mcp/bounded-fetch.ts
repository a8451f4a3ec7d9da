/**
 * One HTTP request to a peer that may be broken or hostile (an authorization server's metadata,
 * JWKS, token or introspection endpoint), read within fixed bounds. Both halves use it: the
 * server's verifiers and the client's `clientCredentials`, each turning a failure into its own
 * error type.
 */

/** What one bounded request gave. */
export interface BoundedReply {
  status: number;
  /** The body as text: at most the byte bound it was read with. */
  text: string;
}

/** The bounds of one request: its whole deadline (body included), and the largest body read. */
export interface BoundedFetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

/** How a failure is reported: the URL's name in messages, and the error a message becomes. */
export interface BoundedFetchFailure {
  /** How messages name the URL, e.g. `The token endpoint https://...`. */
  label: string;
  /** The error thrown for a failure; `cause` is the underlying one, when there is one. */
  error(message: string, cause?: unknown): Error;
  /** The name of the size bound in messages, e.g. `maxResponseBytes`. */
  limitName: string;
}

/** Whether a status is a redirect: its target is not followed, whatever origin it names. */
function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

/**
 * One request with no redirect followed (a 3xx fails, naming its target), a deadline spanning
 * the body, and the body read chunk by chunk up to `maxBytes`: a larger one fails and the rest
 * is never downloaded, so a hostile peer costs at most the bound in memory and the deadline in
 * time.
 * @throws the error `failure.error` makes, when the URL cannot be reached, redirects, is too slow or answers too much
 */
export async function boundedFetch(
  url: string,
  init: RequestInit,
  limits: BoundedFetchLimits,
  failure: BoundedFetchFailure,
): Promise<BoundedReply> {
  const { label } = failure;
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal, redirect: 'manual' });
  } catch (error) {
    const why = signal.aborted ? `no answer within ${limits.timeoutMs} ms` : (error as Error).message;
    throw failure.error(`${label} could not be reached: ${why}`, error);
  }
  if (isRedirect(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    const location = (response.headers.get('location') ?? '').slice(0, 200);
    throw failure.error(
      `${label} answered a redirect (HTTP ${response.status}${location ? ` to ${location}` : ''}); redirects are not followed`,
    );
  }
  const tooLarge = () =>
    failure.error(`${label} answered a body larger than ${failure.limitName} (${limits.maxBytes} bytes)`);
  if (!response.body) return { status: response.status, text: '' };
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
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
        const why = signal.aborted ? `the body did not arrive within ${limits.timeoutMs} ms` : (error as Error).message;
        throw failure.error(`${label} could not be read: ${why}`, error);
      }
      if (chunk.done || !chunk.value) break;
      size += chunk.value.byteLength;
      if (size > limits.maxBytes) throw tooLarge();
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

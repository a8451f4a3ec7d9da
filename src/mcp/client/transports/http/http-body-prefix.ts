/**
 * How much of a body is read when only its start is shown (the detail of an error an answer
 * to a DELETE or to one of our replies carries): a message quotes 200 characters of it.
 */
export const BODY_PREFIX_BYTES = 4096;

/**
 * The first `maxBytes` of a body, as text; the rest is never downloaded (the stream is
 * cancelled). A read that fails gives what arrived until then: this text only ever feeds a
 * message about an answer already known to be an error.
 */
export async function readBodyPrefix(response: Response, maxBytes = BODY_PREFIX_BYTES): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const chunk = await reader.read();
      if (chunk.done || !chunk.value) break;
      const bytes = chunk.value as Uint8Array;
      chunks.push(bytes.subarray(0, maxBytes - size));
      size += bytes.byteLength;
    }
  } catch {
    // What arrived is enough; see above.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Lets go of a body nobody reads: the download stops, the connection is not kept for it. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

import type { McpReadResourceResult, McpResourceContents } from '../../interfaces/mcp-resource-options.interface';

type Loose = Record<string, unknown>;

function isBinary(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function isContentsObject(value: unknown): value is Loose {
  return (
    !!value &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !isBinary(value) &&
    ('text' in value || 'blob' in value)
  );
}

function withMimeType(mimeType: string | undefined): { mimeType?: string } {
  return mimeType ? { mimeType } : {};
}

/**
 * Completes one contents entry: the requested URI and the declared MIME type where the handler
 * left them out, and a Buffer or Uint8Array `blob` encoded as base64.
 */
function normalizeEntry(entry: unknown, uri: string, mimeType: string | undefined): McpResourceContents {
  if (typeof entry === 'string') return { uri, ...withMimeType(mimeType), text: entry };
  if (isBinary(entry)) return { uri, ...withMimeType(mimeType), blob: toBase64(entry) };
  if (!isContentsObject(entry)) {
    throw new Error(`The resource handler for ${uri} returned a contents entry without "text" or "blob"`);
  }
  const normalized: Loose = { ...entry, uri: typeof entry.uri === 'string' ? entry.uri : uri };
  if (normalized.mimeType === undefined && mimeType) normalized.mimeType = mimeType;
  if (isBinary(entry.blob)) normalized.blob = toBase64(entry.blob);
  if ('text' in normalized && typeof normalized.text !== 'string') {
    throw new Error(`The resource handler for ${uri} returned a non-string "text"`);
  }
  if ('blob' in normalized && typeof normalized.blob !== 'string') {
    throw new Error(`The resource handler for ${uri} returned a "blob" that is neither base64 text nor bytes`);
  }
  return normalized as unknown as McpResourceContents;
}

/**
 * Turns what a resource handler returned into a `ReadResourceResult`: text, bytes (a base64
 * blob), one contents object, an array of entries, or a full result whose entries are completed
 * the same way. Returns null for `null`/`undefined`: the resource does not exist.
 */
export function toReadResourceResult(
  returned: unknown,
  uri: string,
  mimeType: string | undefined,
): McpReadResourceResult | null {
  if (returned === null || returned === undefined) return null;
  if (Array.isArray(returned)) return { contents: returned.map((entry) => normalizeEntry(entry, uri, mimeType)) };
  if (returned && typeof returned === 'object' && Array.isArray((returned as Loose).contents)) {
    const result = returned as McpReadResourceResult;
    return { ...result, contents: result.contents.map((entry) => normalizeEntry(entry, uri, mimeType)) };
  }
  return { contents: [normalizeEntry(returned, uri, mimeType)] };
}

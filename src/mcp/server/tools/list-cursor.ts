/** Opaque pagination cursors: clients must not read them, we must not trust them. */

/** Encodes a page index as an opaque cursor. */
export function encodeCursor(page: number): string {
  return Buffer.from(JSON.stringify({ p: page })).toString('base64url');
}

/** Decodes a cursor to a page index, or null when it is not one of ours. */
export function decodeCursor(cursor: unknown): number | null {
  if (typeof cursor !== 'string' || cursor.length > 64) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown };
    return Number.isInteger(parsed.p) && (parsed.p as number) > 0 ? (parsed.p as number) : null;
  } catch {
    return null;
  }
}

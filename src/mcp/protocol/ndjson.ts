/**
 * Newline-delimited JSON framing, as the stdio transport uses it: one JSON-RPC message per line,
 * no embedded newlines. Pure TypeScript: the decoder takes already-decoded text (the caller pins
 * the stream to UTF-8) and never throws on hostile input.
 */
import { MAX_JSON_RPC_DEPTH, jsonNestsDeeperThan } from './json-depth';

/** What one decoded line turned out to be. */
export type NdjsonLine =
  { kind: 'object'; value: Record<string, unknown>; raw: string } | { kind: 'invalid'; raw: string; reason: string };

/** Receives the lines a decoder cuts, and the one overflow it can report. */
export interface NdjsonSink {
  /** A complete non-empty line. */
  line(line: NdjsonLine): void;
  /**
   * The current line grew past `maxLineChars` without a newline. The decoder discards what it
   * holds and ignores input until the next newline, so memory stays bounded.
   */
  overflow(chars: number): void;
}

/** Serialises one message as a single line. `JSON.stringify` escapes newlines inside strings. */
export function encodeNdjson(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** Parses one line; only a JSON object is a message, anything else is reported as invalid. */
export function parseNdjsonLine(raw: string): NdjsonLine {
  if (jsonNestsDeeperThan(raw, MAX_JSON_RPC_DEPTH))
    return { kind: 'invalid', raw, reason: `nested deeper than ${MAX_JSON_RPC_DEPTH} levels` };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', raw, reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', raw, reason: 'not a JSON object' };
  }
  return { kind: 'object', value: value as Record<string, unknown>, raw };
}

/**
 * Cuts a text stream into lines. Chunks are kept as a list until a newline arrives, so a message
 * split over many chunks is joined once, not once per chunk.
 */
export class NdjsonDecoder {
  private pending: string[] = [];
  private pendingChars = 0;
  private discarding = false;

  constructor(
    private readonly sink: NdjsonSink,
    /** Longest line accepted, in UTF-16 code units. */
    private readonly maxLineChars = 64 * 1024 * 1024,
  ) {}

  /** Feeds decoded text. */
  push(chunk: string): void {
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline !== -1) {
      this.take(chunk.slice(start, newline));
      this.flushLine();
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) {
      this.take(start === 0 ? chunk : chunk.slice(start));
    }
  }

  /** Emits a last line that had no trailing newline (at end of stream). */
  end(): void {
    this.flushLine();
  }

  private take(piece: string): void {
    if (this.discarding || piece.length === 0) return;
    if (this.pendingChars + piece.length > this.maxLineChars) {
      const total = this.pendingChars + piece.length;
      this.pending = [];
      this.pendingChars = 0;
      this.discarding = true;
      this.sink.overflow(total);
      return;
    }
    this.pending.push(piece);
    this.pendingChars += piece.length;
  }

  private flushLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    let text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim().length === 0) return;
    this.sink.line(parseNdjsonLine(text));
  }
}

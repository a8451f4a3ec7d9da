/** Recorded wire text is capped, and server texts quoted in errors are shortened. */

/** Accumulates text read from the wire up to a cap, noting how much was cut. */
export class RawRecorder {
  private readonly parts: string[] = [];
  private length = 0;
  private dropped = 0;

  constructor(private readonly limit: number) {}

  /** Appends a chunk, keeping only what fits under the cap. */
  append(chunk: string): void {
    const room = this.limit - this.length;
    if (room >= chunk.length) {
      this.parts.push(chunk);
      this.length += chunk.length;
      return;
    }
    if (room > 0) {
      this.parts.push(chunk.slice(0, room));
      this.length += room;
    }
    this.dropped += chunk.length - Math.max(room, 0);
  }

  /** The recorded text, with a marker when the cap cut it. */
  text(): string {
    const text = this.parts.join('');
    return this.dropped > 0 ? `${text}\n[truncated: ${this.dropped} more characters]` : text;
  }
}

/** Shortens a server-provided text for an error message. */
export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

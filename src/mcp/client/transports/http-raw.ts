/**
 * What `HttpTransport` records and reports: secrets are cut out of every text that leaves the
 * transport (raw fields, error messages), and recorded bodies are capped.
 */

const REDACTED = '[redacted]';
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

/** The secret strings of one transport: the bearer token and the values of credential headers. */
export class HttpSecrets {
  private readonly values: string[];

  constructor(bearerToken: string | null, headers: Record<string, string>) {
    const values = Object.entries(headers)
      .filter(([name]) => SECRET_HEADER.test(name))
      .flatMap(([, value]) => [value, value.replace(/^\s*\S+\s+/, '')]);
    if (bearerToken) values.push(bearerToken);
    // Longest first, so a header value is cut whole before the token inside it.
    this.values = [...new Set(values.filter((value) => value.length >= 4))].sort((a, b) => b.length - a.length);
  }

  /** Returns `text` with every secret replaced by `[redacted]`. */
  redact(text: string): string;
  redact(text: string | null): string | null;
  redact(text: string | null): string | null {
    if (text === null) return null;
    let out = text;
    for (const secret of this.values) out = out.split(secret).join(REDACTED);
    return out;
  }
}

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

/**
 * Secrets are cut out of every text that leaves `HttpTransport` (raw fields, error messages).
 */

const REDACTED = '[redacted]';
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

/** The secret strings of one transport: the bearer token and the values of credential headers. */
export class HttpSecrets {
  private values: string[];
  /** Tokens learnt while running (from an auth provider), newest last; a few are kept. */
  private readonly learnt: string[] = [];

  constructor(bearerToken: string | null, headers: Record<string, string>) {
    const values = Object.entries(headers)
      .filter(([name]) => SECRET_HEADER.test(name))
      .flatMap(([, value]) => [value, value.replace(/^\s*\S+\s+/, '')]);
    if (bearerToken) values.push(bearerToken);
    // Longest first, so a header value is cut whole before the token inside it.
    this.values = [...new Set(values.filter((value) => value.length >= 4))].sort((a, b) => b.length - a.length);
  }

  /** Adds a token got at run time (the last few are kept: older ones no longer reach the wire). */
  add(token: string): void {
    if (token.length < 4 || this.values.includes(token)) return;
    this.learnt.push(token);
    const dropped = this.learnt.length > 8 ? this.learnt.shift() : undefined;
    this.values = [...this.values.filter((value) => value !== dropped), token].sort((a, b) => b.length - a.length);
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

/**
 * An error text fit for a health report: credentials in URLs (`redis://:secret@host`,
 * `postgres://user:secret@host`) and `password=` pairs are masked.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@')
    .replace(/(password\s*[=:]\s*)[^\s&;,]+/gi, '$1***');
}

/** The message of a failure, redacted and kept short. */
export function failureText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return redactSecrets(text).slice(0, 300);
}

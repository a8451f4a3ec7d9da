import type { IncomingHttpHeaders } from 'node:http';
import { memoizedHeaderTest } from '../pipeline/memoized-header-test';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Reads a single-valued header (the first one when it was sent twice). */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * DNS-rebinding protection: true when a browser `Origin` may call the endpoint. Requests without
 * `Origin` (servers, CLIs) are always allowed; by default only localhost origins are.
 */
export function isOriginAllowed(origin: string | undefined, allowed: string[] | '*' | undefined): boolean {
  if (origin === undefined || allowed === '*') return true;
  if (allowed) return allowed.includes(origin);
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/** True when the Content-Type is `application/json` (parameters such as charset allowed). */
export const isJsonContentType: (contentType: string | undefined) => boolean = memoizedHeaderTest(
  (contentType) => contentType.split(';', 1)[0].trim().toLowerCase() === 'application/json',
);

/** True when the Accept header admits a JSON response (`application/json`, `application/*` or `*\/*`). */
export const acceptsJson: (accept: string | undefined) => boolean = memoizedHeaderTest((accept) =>
  accept.split(',').some((part) => {
    const type = part.split(';', 1)[0].trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  }),
);

import type { Type } from '@nestjs/common';
import type { McpAuthorizer } from '../../interfaces/principal.interface';

/** Whether an `auth` option is a class with an `authorize` method (resolved through DI), not a function. */
export function isAuthorizerClass(auth: unknown): auth is Type<McpAuthorizer> {
  return (
    typeof auth === 'function' &&
    typeof ((auth as Type<McpAuthorizer>).prototype as Partial<McpAuthorizer> | undefined)?.authorize === 'function'
  );
}

/**
 * Whether an `auth` authorizer (a function, or a class's `authorize`) declares a request
 * parameter besides the token. One that takes the token alone never reads the request it is
 * handed.
 */
export function authorizerTakesRequest(auth: unknown): boolean {
  if (typeof auth !== 'function') return false;
  // Only the declared parameters are read (`length`), the method is never called from here.
  const prototype = (auth as { prototype?: { authorize?: unknown } }).prototype;
  const authorize = (isAuthorizerClass(auth) ? prototype?.authorize : auth) as (...args: never[]) => unknown;
  return authorize.length !== 1;
}

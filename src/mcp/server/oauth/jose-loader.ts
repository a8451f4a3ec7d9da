import type * as Jose from 'jose';
import { requireOptionalPeer } from '../../optional-peer';

/** The parts of `jose` the verifiers use. */
export type JoseModule = typeof Jose;

let jose: JoseModule | undefined;

/**
 * Loads `jose` (an optional peer, needed by `JwtVerifier` only) on first use. jose 6 is an ES
 * module; Node 20.19 and later `require()` it synchronously.
 * @throws McpConfigurationError when the package is not installed
 */
export function loadJose(feature: string): JoseModule {
  jose ??= requireOptionalPeer<JoseModule>('jose', feature);
  return jose;
}

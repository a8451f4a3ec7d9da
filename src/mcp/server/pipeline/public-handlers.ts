import type { CanActivate } from '@nestjs/common';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidPublicMessage } from '../../mcp.messages';
import { McpAuthenticatedGuard } from './authenticated.guard';

const AUTHENTICATED_ONLY: readonly CanActivate[] = Object.freeze([new McpAuthenticatedGuard()]);
const NONE: readonly CanActivate[] = Object.freeze([]);

/** The `public` of a handler decorator, checked at boot: absent (false) or a boolean. */
export function checkedPublic(decorator: string, owner: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new McpConfigurationError(invalidPublicMessage(decorator, owner, value));
  return value;
}

/**
 * The built-in guards a handler runs before its own: `McpAuthenticatedGuard` for a handler that
 * is not public on a mount that admits anonymous callers, none otherwise (a mount without
 * `anonymous` behaves as if `public` did not exist).
 */
export function builtInGuards(anonymousMount: boolean, isPublic: boolean): readonly CanActivate[] {
  return anonymousMount && !isPublic ? AUTHENTICATED_ONLY : NONE;
}

import type { McpPrincipal } from '../../interfaces/principal.interface';
import { isMcpAnonymous } from '../auth/anonymous-principal';
import type { McpHandlerKind } from '../pipeline/mcp-execution-context';

/** Separates the parts of a switch field: kind, name and (for a per-principal switch) the principal key. */
const SEP = '\u0000';

/** The stored field that turns a handler off for everyone, or for one principal. */
export function switchField(kind: McpHandlerKind, name: string, principalKey?: string): string {
  return principalKey === undefined ? `${kind}${SEP}${name}` : `${kind}${SEP}${name}${SEP}${principalKey}`;
}

/** The handler a stored field belongs to (`kind NUL name`), without the principal. */
export function handlerOfField(field: string): string {
  const [kind, name] = field.split(SEP);
  return `${kind}${SEP}${name}`;
}

/**
 * Which handlers of a mount are switched off, for everyone or per principal (`McpRegistry`'s
 * enable/disable). Read on every list and call; lists are computed per caller only while
 * something is switched off.
 */
export class HandlerSwitches {
  private fields = new Set<string>();
  private readonly authenticatedOnly = new Set<string>();

  /** True when some handler is off for someone: lists then depend on the caller. */
  get active(): boolean {
    return this.fields.size > 0 || this.authenticatedOnly.size > 0;
  }

  /** True when the handler is on for the principal. */
  allows(kind: McpHandlerKind, name: string, principal: McpPrincipal): boolean {
    if (!this.active) return true;
    const field = switchField(kind, name);
    if (this.authenticatedOnly.has(field) && isMcpAnonymous(principal)) return false;
    return !this.fields.has(field) && !this.fields.has(switchField(kind, name, principal.key));
  }

  /**
   * Hides a handler added at run time from the anonymous principal (on a mount that admits
   * anonymous callers, as the built-in guard does for a decorated handler that is not public), or
   * stops doing so when it is removed. Process-local: each replica adds its own handlers.
   */
  authenticatedOnlyFor(kind: McpHandlerKind, name: string, on: boolean): void {
    if (on) this.authenticatedOnly.add(switchField(kind, name));
    else this.authenticatedOnly.delete(switchField(kind, name));
  }

  /** Replaces the whole state (as read from the shared store). */
  replace(fields: Iterable<string>): void {
    this.fields = new Set(fields);
  }

  /** The fields of one handler now off (for enabling it again everywhere). */
  fieldsOf(kind: McpHandlerKind, name: string): string[] {
    const handler = switchField(kind, name);
    return [...this.fields].filter((field) => handlerOfField(field) === handler);
  }
}

import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { McpHandlerSwitchRecord } from '../../persistence/interfaces/mcp-handler-switch-store.interface';
import { storedHandlerName, storedPrincipalKey } from '../../persistence/new-records';
import { isMcpAnonymous } from './anonymous-principal';
import type { McpHandlerKind } from './mcp-execution-context';

/** Separates the parts of a switch key: kind, name and (for a per-principal switch) the principal key. */
const SEP = '\u0000';

/** The key of a switch that turns a handler off for everyone, or for one principal. */
function switchKey(kind: string, name: string, principalKey?: string | null): string {
  return principalKey === undefined || principalKey === null
    ? `${kind}${SEP}${name}`
    : `${kind}${SEP}${name}${SEP}${principalKey}`;
}

/**
 * Which handlers of a mount are switched off, for everyone or per principal (`McpRegistry`'s
 * enable/disable, as last read from the mount's `McpHandlerSwitchStore`). Read on every list and
 * call; lists are computed per caller only while something is switched off.
 */
export class HandlerSwitches {
  private keys = new Set<string>();
  private readonly authenticatedOnly = new Set<string>();

  /** True when some handler is off for someone: lists then depend on the caller. */
  get active(): boolean {
    return this.keys.size > 0 || this.authenticatedOnly.size > 0;
  }

  /** True when the handler is on for the principal. */
  allows(kind: McpHandlerKind, name: string, principal: McpPrincipal): boolean {
    if (!this.active) return true;
    if (this.authenticatedOnly.has(switchKey(kind, name)) && isMcpAnonymous(principal)) return false;
    if (!this.keys.size) return true;
    if (this.keys.has(switchKey(kind, name)) || this.keys.has(switchKey(kind, name, principal.key))) return false;
    // The shipped stores keep a value too long for its column as a unique cut: match that form too.
    const storedName = storedHandlerName(name);
    const storedKey = storedPrincipalKey(principal.key);
    if (storedName === name && storedKey === principal.key) return true;
    return !this.keys.has(switchKey(kind, storedName)) && !this.keys.has(switchKey(kind, storedName, storedKey));
  }

  /**
   * Hides a handler added at run time from the anonymous principal (on a mount that admits
   * anonymous callers, as the built-in guard does for a decorated handler that is not public), or
   * stops doing so when it is removed. Process-local: each replica adds its own handlers.
   */
  authenticatedOnlyFor(kind: McpHandlerKind, name: string, on: boolean): void {
    if (on) this.authenticatedOnly.add(switchKey(kind, name));
    else this.authenticatedOnly.delete(switchKey(kind, name));
  }

  /** Replaces the whole state with the switches read from the store. */
  replace(switches: Iterable<McpHandlerSwitchRecord>): void {
    this.keys = new Set([...switches].map((record) => switchKey(record.kind, record.name, record.principalKey)));
  }
}

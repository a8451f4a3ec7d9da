import { methodFacts } from '../protocol/method-catalog';

/**
 * The server capability a client->server method needs (the client refuses what was not declared), or
 * null when it needs none: `ping`, `initialize`, notifications, methods a server sends, and
 * methods MCP does not define.
 */
export function requiredCapability(method: string): string | null {
  const requirement = methodFacts(method)?.capability;
  return requirement?.holder === 'server' ? requirement.name : null;
}

/**
 * Whether the server's declared capabilities allow a method: its capability is declared (not
 * null or false), with the flag the catalog names when there is one (`resources.subscribe` for
 * `resources/subscribe` and `resources/unsubscribe`).
 */
export function allowsMethod(capabilities: Record<string, unknown>, method: string): boolean {
  const requirement = methodFacts(method)?.capability;
  if (requirement?.holder !== 'server') return true;
  const declared = capabilities[requirement.name];
  if (declared === undefined || declared === null || declared === false) return false;
  return requirement.sub === undefined || (declared as Record<string, unknown>)[requirement.sub] === true;
}

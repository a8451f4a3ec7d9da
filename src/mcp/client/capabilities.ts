/** Which server capability each client->server method needs (DESIGN: refuse what was not declared). */
const REQUIRED_CAPABILITY: Record<string, string> = {
  'tools/list': 'tools',
  'tools/call': 'tools',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'resources/read': 'resources',
  'resources/subscribe': 'resources',
  'resources/unsubscribe': 'resources',
  'completion/complete': 'completions',
  'logging/setLevel': 'logging',
};

/** The capability a method needs, or null (ping, initialize, notifications). */
export function requiredCapability(method: string): string | null {
  return REQUIRED_CAPABILITY[method] ?? null;
}

/**
 * Whether declared capabilities allow a method. `resources/subscribe` also needs
 * `resources.subscribe: true`.
 */
export function allowsMethod(capabilities: Record<string, unknown>, method: string): boolean {
  const capability = requiredCapability(method);
  if (!capability) return true;
  const declared = capabilities[capability];
  if (declared === undefined || declared === null || declared === false) return false;
  if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
    return (declared as Record<string, unknown>).subscribe === true;
  }
  return true;
}

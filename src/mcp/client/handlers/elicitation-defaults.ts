/**
 * SEP-1034: a form field the user left out of an accepted elicitation takes the `default` its
 * `requestedSchema` gives, so the server receives what the form showed. Fields the handler did
 * fill in are kept as they are; other actions (decline, cancel) carry no content to complete.
 */
export function withElicitationDefaults(
  params: Record<string, unknown>,
  result: Record<string, unknown>,
): Record<string, unknown> {
  if (result.action !== 'accept') return result;
  const schema = params.requestedSchema as { properties?: Record<string, unknown> } | undefined;
  const properties = schema?.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const content =
    result.content && typeof result.content === 'object' && !Array.isArray(result.content)
      ? (result.content as Record<string, unknown>)
      : {};
  const filled = { ...content };
  for (const [name, field] of Object.entries(properties)) {
    const fallback = field && typeof field === 'object' ? (field as { default?: unknown }).default : undefined;
    if (fallback !== undefined && filled[name] === undefined) filled[name] = fallback;
  }
  return Object.keys(filled).length || result.content !== undefined ? { ...result, content: filled } : result;
}

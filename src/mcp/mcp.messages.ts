/** Boot and configuration messages: each says what is wrong and how to fix it. */

export const missingAuthMessage = (mount: string): string =>
  `McpModule (mount "${mount}") has no "auth" option. Every MCP endpoint must authenticate its callers: ` +
  `pass auth: (token, request) => principal | null, or an injectable class with an authorize(token, request) method, ` +
  `to McpModule.forRoot({...}) or return it from the forRootAsync factory.`;

export const invalidAuthMessage = (mount: string): string =>
  `McpModule (mount "${mount}"): "auth" must be a function (token, request) => principal | null, ` +
  `or a class with an authorize(token, request) method that is registered as a provider.`;

export const invalidToolNameMessage = (name: string, owner: string): string =>
  `@McpTool on ${owner} has the invalid name "${name}". Tool names are 1 to 128 characters of ` +
  `A-Z, a-z, 0-9, "_", "." and "-". Rename the method or pass { name: '...' } to @McpTool.`;

export const duplicateToolMessage = (mount: string, name: string, first: string, second: string): string =>
  `Duplicate MCP tool "${name}" on mount "${mount}": declared by ${first} and by ${second}. ` +
  `Give one of them another name with @McpTool({ name: '...' }), or serve them on different mounts (providers option).`;

export const invalidSchemaMessage = (owner: string, which: 'input' | 'output', reason: string): string =>
  `@McpTool on ${owner}: the ${which} schema is invalid (${reason}). ` +
  `Pass a class-validator DTO class, a JSON Schema object with type: 'object', or a Standard Schema of an object (such as z.object({...})).`;

export const standardSchemaWithoutJsonSchemaMessage = (
  owner: string,
  which: 'input' | 'output',
  reason: string,
): string =>
  `@McpTool on ${owner}: the ${which} Standard Schema has no JSON Schema to publish as ${which}Schema (${reason}). ` +
  `Pass the JSON Schema yourself as ${which}JsonSchema, or use a schema library that offers Standard JSON Schema (~standard.jsonSchema, such as Zod 4.2 or later).`;

export const promptArgumentsSchemaMessage = (owner: string, reason: string): string =>
  `@McpPrompt on ${owner}: the arguments schema cannot define the prompt's arguments (${reason}). ` +
  `Pass a Standard Schema of an object of strings from a library that offers Standard JSON Schema (such as z.object({...}) of Zod 4.2 or later), a DTO class, or a list of arguments.`;

export const jsonSchemaWithoutStandardSchemaMessage = (owner: string, which: 'input' | 'output'): string =>
  `@McpTool on ${owner}: ${which}JsonSchema is only for a Standard Schema ${which}; ` +
  `pass the JSON Schema as ${which} itself, or pass a Standard Schema (such as z.object({...})) as ${which}.`;

export const templateVariablesSchemaMessage = (owner: string, reason: string): string =>
  `@McpResourceTemplate on ${owner}: variables must be a Standard Schema of an object keyed by the template's variables (${reason}). ` +
  `Pass a schema such as z.object({ id: z.coerce.number() }), or leave variables out to receive the strings of the URI.`;

export const requestScopedToolMessage = (owner: string): string =>
  `@McpTool on ${owner}: the provider is request-scoped; a fresh instance is resolved for every call.`;

export const duplicateMountMessage = (mount: string): string =>
  `McpModule.forRoot was called twice with the mount name "${mount}". Give each mount its own { mount: '...' } and path.`;

export const unsupportedAdapterMessage = (mount: string, adapter: string): string =>
  `McpModule (mount "${mount}") serves HTTP through @nestjs/platform-express or @nestjs/platform-fastify; the app uses "${adapter}". Create the app with one of those adapters.`;

export const publicRestrictedMessage = (decorator: string, owner: string, name: string, restrictions: string): string =>
  `${decorator} "${name}" on ${owner} is public and also asks for ${restrictions}, which the anonymous principal never holds. ` +
  `Remove public: true to keep it for signed-in callers, or remove ${restrictions} to open it to everyone.`;

export const invalidPublicMessage = (decorator: string, owner: string, value: unknown): string =>
  `${decorator} on ${owner}: public must be true or false, got ${JSON.stringify(value)}.`;

export const invalidOptionMessage = (mount: string, option: string, expected: string): string =>
  `McpModule (mount "${mount}"): option "${option}" must be ${expected}.`;

export const serversFileUnreadableMessage = (file: string, reason: string): string =>
  `McpClientModule option "serversFile": cannot read ${JSON.stringify(file)} (${reason}). ` +
  `Give the path of a JSON file like { "mcpServers": { "name": { "command": "npx", "args": ["..."] } } }, or remove the option.`;

export const serversFileInvalidMessage = (file: string, reason: string): string =>
  `McpClientModule option "serversFile": ${JSON.stringify(file)} ${reason}. ` +
  `Expected { "mcpServers": { "name": { "command", "args", "env", "cwd" } | { "url", "headers" } } }.`;

export const duplicateServerMessage = (name: string): string =>
  `MCP server "${name}" is declared both in servers and in serversFile of McpClientModule. Remove one of them or rename it.`;

export const duplicateTransportMessage = (transport: string): string =>
  `Two transport factories serve transport "${transport}". Give your factory another \`transport\` name (stdio, http and toolset are built in).`;

export const invalidServerMessage = (name: string, reason: string): string =>
  `MCP server "${name}": ${reason}. Declare { command: ['program', 'arg'] } (stdio), { url: 'https://...' } (http) ` +
  `or { transport: 'toolset', mount, principal } (a mount of this app).`;

export const invalidClientOptionMessage = (option: string, expected: string): string =>
  `McpClientModule option "${option}" must be ${expected}.`;

export const ephemeralRequestStateSecretMessage = (mount: string): string =>
  `McpModule (mount "${mount}"): no stateless.requestStateSecret configured; multi round-trip (input_required) ` +
  `requests are sealed with a secret generated for this process. With several replicas, set the same ` +
  `stateless.requestStateSecret (at least 16 bytes) on every one of them.`;

export const missingSharedRequestStateSecretMessage = (mount: string): string =>
  `McpModule (mount "${mount}"): redis is set (several replicas) but stateless.requestStateSecret is not, so a ` +
  `multi round-trip retry reaching another replica could not be opened. Pass stateless: { requestStateSecret: ` +
  `'<a long random string shared by every replica>' } (at least 16 bytes, the same on every replica).`;

export const invalidRequestStateSecretMessage = (mount: string, problem: string): string =>
  `McpModule (mount "${mount}"): ${problem}. Pass stateless: { requestStateSecret: '<a long random string shared by every replica>' }, ` +
  `or leave it out to use a per-process secret (single replica only).`;

export const duplicateResourceMessage = (mount: string, uri: string, first: string, second: string): string =>
  `Duplicate MCP resource "${uri}" on mount "${mount}": declared by ${first} and by ${second}. ` +
  `Give one of them another uri (or uriTemplate), or serve them on different mounts (providers option).`;

export const duplicatePromptMessage = (mount: string, name: string, first: string, second: string): string =>
  `Duplicate MCP prompt "${name}" on mount "${mount}": declared by ${first} and by ${second}. ` +
  `Give one of them another name with @McpPrompt({ name: '...' }), or serve them on different mounts (providers option).`;

export const invalidUriTemplateMessage = (owner: string, template: string, reason: string): string =>
  `@McpResourceTemplate on ${owner}: the uriTemplate ${JSON.stringify(template)} is invalid (${reason}). ` +
  `Use an RFC 6570 level-1 template such as "users://{id}/profile", with a literal between variables.`;

export const invalidResourceUriMessage = (owner: string, uri: string): string =>
  `@McpResource on ${owner}: the uri ${JSON.stringify(uri)} is not an absolute URI. Give a URI with a scheme, e.g. "config://app" or "file:///readme.md".`;

export const unknownCompleterMessage = (owner: string, name: string, known: string[]): string =>
  `${owner}: "complete" names "${name}", which is not one of its ${known.length ? `arguments (${known.join(', ')})` : 'arguments: it has none'}. ` +
  `Key each completer by an argument name (prompts) or a template variable (resource templates).`;

export const missingCompleterMethodMessage = (owner: string, name: string, method: string): string =>
  `${owner}: the completer of "${name}" names the method "${method}", which its provider does not have. ` +
  `Pass a function (value, context) => string[] or the name of a method of the same provider.`;

export const requestScopedFeatureMessage = (kind: string, owner: string): string =>
  `${kind} on ${owner}: the provider is request-scoped; a fresh instance is resolved for every call.`;

export const invalidMcpHeaderMessage = (owner: string, tool: string, problem: string): string =>
  `@McpTool "${tool}" on ${owner}: invalid x-mcp-header in its input schema: ${problem}. ` +
  `Put x-mcp-header only on string, integer or boolean properties reached from the root through "properties", ` +
  `with a unique (ignoring case) HTTP token as its value, e.g. { region: { type: 'string', 'x-mcp-header': 'Region' } }.`;

/** A tool's `task` option is not one of the values the specification defines. */
export function invalidTaskSupportMessage(owner: string, value: unknown): string {
  return `${owner}: @McpTool option "task" is ${JSON.stringify(value)}; use 'forbidden', 'optional' or 'required'.`;
}

/** A tool's `inputBeforeTask` is not a boolean, or is set on a tool that never runs as a task. */
export function invalidInputBeforeTaskMessage(owner: string, value: unknown, task: unknown): string {
  return typeof value !== 'boolean'
    ? `${owner}: @McpTool option "inputBeforeTask" is ${JSON.stringify(value)}; use true or false.`
    : `${owner}: @McpTool option "inputBeforeTask" needs task: 'optional' or 'required' (task is ${JSON.stringify(task ?? 'forbidden')}).`;
}

/** A `rateLimit` option (a tool's or the mount's) that is not a budget of calls. */
export function invalidRateLimitMessage(where: string, value: unknown, perAllowed: boolean): string {
  const shape = perAllowed
    ? "{ limit: <calls, a positive integer>, windowMs: <a positive integer>, per?: 'principal' | 'mount' }"
    : '{ limit: <calls, a positive integer>, windowMs: <a positive integer> }';
  return `${where}: rateLimit must be ${shape}, got ${JSON.stringify(value)}; e.g. rateLimit: { limit: 10, windowMs: 60_000 }.`;
}

export const missingTrustedIssuerMessage = (clientId: string): string =>
  `clientCredentials for "${clientId}" names no authorization server to trust, so any MCP server could have it send its credentials anywhere. ` +
  `Add authorizationServer: 'https://<issuer>' (the issuer client "${clientId}" is registered at), ` +
  `or trustedAuthorizationServers: ['https://<issuer>', ...] when it is registered under several issuer identifiers.`;

export const bothTrustedIssuerOptionsMessage = (clientId: string): string =>
  `clientCredentials for "${clientId}" has both authorizationServer and trustedAuthorizationServers. ` +
  `Keep one: authorizationServer for a single issuer, trustedAuthorizationServers for several.`;

export const invalidTrustedIssuerMessage = (clientId: string, option: string, value: unknown, reason: string): string =>
  `clientCredentials for "${clientId}": ${option} ${JSON.stringify(value)} ${reason}. ` +
  `Give the issuer identifier exactly as the authorization server's metadata states it: an https URL without query or fragment ` +
  `(http only on a loopback host such as 127.0.0.1, localhost or [::1]).`;

export const invalidClientCredentialsLimitMessage = (
  clientId: string,
  option: string,
  value: unknown,
  fallback: string,
): string =>
  `clientCredentials for "${clientId}": ${option} must be an integer >= 1 (got ${String(value)}); remove it to use the default ${fallback}.`;

export const invalidVerifierLimitMessage = (
  verifier: string,
  option: string,
  value: unknown,
  fallback: string,
): string =>
  `${verifier}: ${option} must be an integer >= 1 (got ${String(value)}); remove it to use the default ${fallback}.`;

export const invalidTokenEndpointMessage = (clientId: string, value: unknown, reason: string): string =>
  `clientCredentials for "${clientId}": tokenEndpoint ${JSON.stringify(value)} ${reason}. ` +
  `Give the token endpoint URL exactly as the authorization server serves it: an https URL without fragment or credentials ` +
  `(http only on a loopback host such as 127.0.0.1, localhost or [::1]), or remove it to use the one the issuer's metadata announces on its own origin.`;

export const tokenEndpointWithoutPinnedIssuerMessage = (clientId: string): string =>
  `clientCredentials for "${clientId}": tokenEndpoint belongs to one authorization server, so it needs that server pinned with ` +
  `authorizationServer: 'https://<issuer>' instead of trustedAuthorizationServers.`;

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
  `Pass a class-validator DTO class or a JSON Schema object with type: 'object'.`;

export const requestScopedToolMessage = (owner: string): string =>
  `@McpTool on ${owner}: the provider is request-scoped; a fresh instance is resolved for every call.`;

export const duplicateMountMessage = (mount: string): string =>
  `McpModule.forRoot was called twice with the mount name "${mount}". Give each mount its own { mount: '...' } and path.`;

export const invalidOptionMessage = (mount: string, option: string, expected: string): string =>
  `McpModule (mount "${mount}"): option "${option}" must be ${expected}.`;

export const serversFileUnreadableMessage = (file: string, reason: string): string =>
  `McpModule client option "serversFile": cannot read ${JSON.stringify(file)} (${reason}). ` +
  `Give the path of a JSON file like { "mcpServers": { "name": { "command": "npx", "args": ["..."] } } }, or remove the option.`;

export const serversFileInvalidMessage = (file: string, reason: string): string =>
  `McpModule client option "serversFile": ${JSON.stringify(file)} ${reason}. ` +
  `Expected { "mcpServers": { "name": { "command", "args", "env", "cwd" } | { "url", "headers" } } }.`;

export const duplicateServerMessage = (name: string): string =>
  `MCP server "${name}" is declared both in client.servers and in client.serversFile. Remove one of them or rename it.`;

export const invalidServerMessage = (name: string, reason: string): string =>
  `MCP server "${name}": ${reason}. Declare { command: ['program', 'arg'] } (stdio), { url: 'https://...' } (http) ` +
  `or { transport: 'toolset', mount, principal } (a mount of this app).`;

export const invalidClientOptionMessage = (option: string, expected: string): string =>
  `McpModule client option "${option}" must be ${expected}.`;

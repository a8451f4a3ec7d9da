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

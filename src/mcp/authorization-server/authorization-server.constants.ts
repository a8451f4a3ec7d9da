/** Injection token of the resolved `McpAuthorizationServerModule` options. */
export const MCP_AUTHORIZATION_SERVER_OPTIONS = Symbol('MCP_AUTHORIZATION_SERVER_OPTIONS');

/** Injection token of the TypeORM `DataSource` the authorization server keeps its state in. */
export const MCP_AUTHORIZATION_SERVER_DATA_SOURCE = Symbol('MCP_AUTHORIZATION_SERVER_DATA_SOURCE');

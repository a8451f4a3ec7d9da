export * from './jsonrpc';
export * from './revisions';
export * from './mcp-methods';
export * from './stateless';
export * from './method-catalog';
export * from './param-header-annotations';

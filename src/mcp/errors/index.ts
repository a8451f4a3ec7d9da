export * from './mcp-configuration.error';
export * from './mcp-rpc.error';
export * from './mcp-client.errors';
export * from './mcp-client-call.errors';
export * from './mcp-input-required.error';

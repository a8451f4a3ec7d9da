export * from './mcp-configuration.errors';
export * from './mcp-rpc.errors';
export * from './mcp-client.errors';
export * from './mcp-client-call.errors';
export * from './mcp-input-required.errors';
export * from './mcp-outage.errors';
export * from './mcp-elicitation.errors';
export * from './mcp-sampling.errors';

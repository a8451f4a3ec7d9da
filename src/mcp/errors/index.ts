export * from './mcp-configuration.error';
export * from './mcp-protocol.error';

import { Inject } from '@nestjs/common';

/** Injection token of a mount's resolved options. */
export const MCP_MODULE_OPTIONS = 'MCP_MODULE_OPTIONS';

/** Metadata key of `@McpTool`. */
export const MCP_TOOL_METADATA = 'mcp:tool';

/** Metadata key of `@McpResource`. */
export const MCP_RESOURCE_METADATA = 'mcp:resource';

/** Metadata key of `@McpResourceTemplate`. */
export const MCP_RESOURCE_TEMPLATE_METADATA = 'mcp:resource-template';

/** Metadata key of `@McpPrompt`. */
export const MCP_PROMPT_METADATA = 'mcp:prompt';

/** The name a mount gets when none is given. */
export const DEFAULT_MOUNT = 'default';

/** The path a mount gets when none is given. */
export const DEFAULT_PATH = '/mcp';

/** Default largest request body: 4 MiB, like the official SDK. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Default deadline for reading a request body: 30 seconds. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** Default idle time after which a session expires: one hour. */
export const DEFAULT_SESSION_IDLE_TTL_MS = 60 * 60 * 1000;

/** Default `tools/list` page size. */
export const DEFAULT_PAGE_SIZE = 100;

/** Injection token of a mount's `Toolset`. */
export function getMcpToolsetToken(mount: string = DEFAULT_MOUNT): string {
  return `McpToolset:${mount}`;
}

/** Injection token of a mount's resolved options. */
export function getMcpOptionsToken(mount: string = DEFAULT_MOUNT): string {
  return `McpOptions:${mount}`;
}

/** Injects the `Toolset` of a mount. */
export const InjectMcpToolset = (mount: string = DEFAULT_MOUNT): ParameterDecorator =>
  Inject(getMcpToolsetToken(mount));

/** Injection token of a mount's `McpRetentionService` (the pruner of its `retention` option). */
export function getMcpRetentionToken(mount: string = DEFAULT_MOUNT): string {
  return `McpRetention:${mount}`;
}

/** Injects a mount's `McpRetentionService` (default mount when omitted). */
export const InjectMcpRetention = (mount: string = DEFAULT_MOUNT): ParameterDecorator =>
  Inject(getMcpRetentionToken(mount));

/** Injection token of a mount's `McpTaskService` (its task queue, for `McpHealthIndicator.tasks`). */
export function getMcpTaskServiceToken(mount: string = DEFAULT_MOUNT): string {
  return `McpTaskService:${mount}`;
}

/** @internal Injection token of a mount's `McpStdioEndpoint`, which `serveMcpOverStdio` looks up. */
export function getMcpStdioEndpointToken(mount: string = DEFAULT_MOUNT): string {
  return `McpStdioEndpoint:${mount}`;
}

/** Injection token of a mount's `McpResourceNotifier` (for apps with several mounts). */
export function getMcpResourceNotifierToken(mount: string = DEFAULT_MOUNT): string {
  return `McpResourceNotifier:${mount}`;
}

/** Injects the `McpResourceNotifier` of a mount. */
export const InjectMcpResourceNotifier = (mount: string = DEFAULT_MOUNT): ParameterDecorator =>
  Inject(getMcpResourceNotifierToken(mount));

/** Injection token of a mount's `McpElicitationNotifier` (for apps with several mounts). */
export function getMcpElicitationNotifierToken(mount: string = DEFAULT_MOUNT): string {
  return `McpElicitationNotifier:${mount}`;
}

/** Injects the `McpElicitationNotifier` of a mount. */
export const InjectMcpElicitationNotifier = (mount: string = DEFAULT_MOUNT): ParameterDecorator =>
  Inject(getMcpElicitationNotifierToken(mount));

/**
 * Injection token of the issuer of the app's own authorization server (`McpAuthorizationServerModule`),
 * which a mount's `oauth` option names when it lists no `authorizationServers`.
 */
export const MCP_AUTHORIZATION_SERVER_ISSUER = Symbol('MCP_AUTHORIZATION_SERVER_ISSUER');
